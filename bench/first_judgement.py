"""The first judgement on the bundled model, as a newcomer runs it from a fresh clone:

    .venv/bin/python bench/first_judgement.py [--repeats 5] [--before REF]

times `manage.py judge case.json --json` (the whole process: Django's start, the local
server's start, the calls, the verdict) on a fresh SQLite database each time (migrated
first, untimed), three `smollm2-135m` agents with the travel-expense panel's criteria on
one clean expense claim, and prints the median of `--repeats` runs with the verdict, its
mark and how many calls beside the vote each judgement made.

With `--before REF` it also times the code at git revision REF (exported with
`git archive` to a temporary directory, run with this virtualenv's Python), alternating
before and after run by run, so a machine that several people share slows both sides
alike; the two medians come from the same stretch of time. `--after REF` times a
revision in place of the working tree.

With `--variants "default,user_words+plain_later+turn_needs_reason"` it times this tree
under each framing in turn (issue 69: "the bundled model's first verdict no slower"),
alternating as above: the agents are saved first (untimed) as an example panel with
those `prompt_variants` ("default": none set, the site's default) and the case names it,
so every side takes the same way in.

With `--kept-states` every run starts with the local server's saved slot states
(MAGI_VAR_DIR/slot-states, judgements/llm/local/warm_rules.py) that one untimed judgement
of the same side saved first: a deployment's judgements after its first, each `manage.py
judge` starting a server that loads the rules rather than reading them. Without it, each
run is a newcomer's first, whose server reads them once.
"""

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PANEL = ROOT / "judgements" / "examples" / "panels" / "travel-expense.yaml"
CLAIM = (
    "Expense claim: train ticket Berlin to Hamburg, second class, 89 EUR, for the workshop "
    "with our client Nordhafen GmbH on 12 March. Itemised receipt attached."
)


@dataclass(frozen=True)
class Timed:
    seconds: float
    status: str
    trust: str | None
    checks: int
    reasons: tuple[str, ...] = ()  # why it is contested, if it is


def case_file(directory: Path, panel: str | None = None) -> Path:
    """The case: the travel-expense panel's three agents (all on the bundled model)
    inline, as a newcomer's case file names them, with no saved panel; or the saved
    panel `panel` (`--variants`)."""
    agents = yaml.safe_load(PANEL.read_text())["agents"]
    path = directory / "case.json"
    who = {"panel": panel} if panel else {"agents": agents}
    path.write_text(json.dumps({"title": "Train to a client", "content": CLAIM, **who}))
    return path


PANEL_NAME = "first judgement"
# Saves the agents of BENCH_PANEL_FILE as an example panel named BENCH_PANEL_NAME with the
# prompt variants in BENCH_VARIANTS (JSON: a list, or null for the site's default).
SAVE_PANEL = """
import json, os, yaml
from judgements.models import Panel
agents = yaml.safe_load(open(os.environ["BENCH_PANEL_FILE"]))["agents"]
Panel.objects.create(name=os.environ["BENCH_PANEL_NAME"], owner=None, team=None, agents=agents,
    prompt_variants=json.loads(os.environ["BENCH_VARIANTS"]))
"""


def export(ref: str, directory: Path) -> Path:
    """The tree at `ref`, as files in `directory`."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", ref],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(directory)], input=archive, check=True)
    return directory


def environment(var_dir: Path, tree: Path) -> dict[str, str]:
    """A deployment's environment with nothing but the bundled model: no remote provider,
    no Redis or PostgreSQL, MAGI's settings at their defaults."""
    kept = {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "VIRTUAL_ENV"}
    env = {name: value for name, value in os.environ.items() if name in kept}
    # `make run` keeps a key in the var directory; a fresh one needs one given.
    env.update(
        MAGI_VAR_DIR=str(var_dir),
        SECRET_KEY="first-judgement-bench",
        PYTHONPATH=str(tree),
    )
    return env


def judge_once(
    tree: Path,
    case: Path,
    variants: list[str] | None = None,
    states: Path | None = None,
) -> Timed:
    """One judgement on a fresh database: migrate (untimed), then `manage.py judge`.
    `variants`: save the panel the case names with these prompt variants first. `states`:
    a directory the local server's saved slot states are copied from, before (when it
    exists) and into, after (`--kept-states`)."""
    with tempfile.TemporaryDirectory(prefix="magi-first-") as var:
        env = environment(Path(var), tree)
        kept = Path(var) / "slot-states"
        if states is not None and states.is_dir():
            shutil.copytree(states, kept)
        manage = [sys.executable, str(tree / "manage.py")]
        subprocess.run([*manage, "migrate", "-v0"], cwd=tree, env=env, check=True)
        if variants is not None:
            saving = {
                **env,
                "BENCH_PANEL_FILE": str(PANEL),
                "BENCH_PANEL_NAME": PANEL_NAME,
                "BENCH_VARIANTS": json.dumps(variants or None),
            }
            save = [*manage, "shell", "-v0", "-c", SAVE_PANEL]
            subprocess.run(save, cwd=tree, env=saving, check=True)
        began = time.perf_counter()
        done = subprocess.run(
            [*manage, "judge", str(case), "--json"],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - began
        if states is not None and not states.is_dir() and kept.is_dir():
            shutil.copytree(kept, states)
        if done.returncode not in (0, 3, 4):
            raise SystemExit(f"judge failed ({done.returncode}) in {tree}:\n{done.stderr}")
        answer = json.loads(done.stdout)
        with sqlite3.connect(Path(var) / "db.sqlite3") as db:
            (checks,) = db.execute("SELECT count(*) FROM judgements_judgementcheck").fetchone()
        reasons = tuple(answer.get("contest_reasons") or ())
        return Timed(seconds, answer["status"], answer.get("trust"), checks, reasons)


def summary(name: str, runs: list[Timed]) -> str:
    times = ", ".join(f"{run.seconds:.1f}" for run in runs)
    marks = sorted({f"{run.status}/{run.trust}" for run in runs})
    calls = sorted({run.checks for run in runs})
    return (
        f"{name}: median {statistics.median(r.seconds for r in runs):.1f} s "
        f"(runs {times}); verdicts {', '.join(marks)}; calls beside the vote {calls}"
    )


Side = tuple[Path, Path, list[str] | None]  # the tree, the case file, the panel's variants


def sides_to_time(args: argparse.Namespace, work: Path) -> dict[str, Side]:
    """What each side runs: revisions (`--before`/`--after`), or framings (`--variants`)."""
    if args.variants:
        if args.before or args.after:
            raise SystemExit("--variants times this tree: not with --before or --after")
        case = case_file(work, PANEL_NAME)
        framings = [name.strip() for name in args.variants.split(",")]
        return {
            name: (ROOT, case, [] if name == "default" else name.split("+")) for name in framings
        }
    case = case_file(work)
    after = export(args.after, Path(tempfile.mkdtemp(dir=work))) if args.after else ROOT
    trees = {"after" if args.before else "this tree": after}
    if args.before:
        trees = {"before": export(args.before, Path(tempfile.mkdtemp(dir=work))), **trees}
    return {name: (tree, case, None) for name, tree in trees.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--before", help="a git revision to time alongside this tree")
    parser.add_argument("--after", help="a git revision to time in place of this tree")
    parser.add_argument(
        "--variants", help='framings to time this tree under, comma-separated ("default", "a+b")'
    )
    parser.add_argument(
        "--kept-states",
        action="store_true",
        help="start each run with the slot states a first, untimed judgement saved, as "
        "MAGI_VAR_DIR keeps them from one judgement to the next",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="magi-bench-"))
    try:
        sides = sides_to_time(args, work)
        results: dict[str, list[Timed]] = {name: [] for name in sides}
        states = {name: work / f"states-{index}" for index, name in enumerate(sides)}
        if args.kept_states:
            # One judgement each, untimed, saves the slot states every timed run starts with.
            for name, (tree, case, variants) in sides.items():
                judge_once(tree, case, variants, states[name])
        for repeat in range(args.repeats):
            # Alternate the order too, so neither side always runs on a warmer machine.
            order = list(sides.items()) if repeat % 2 == 0 else list(sides.items())[::-1]
            for name, (tree, case, variants) in order:
                kept = states[name] if args.kept_states else None
                timed = judge_once(tree, case, variants, kept)
                results[name].append(timed)
                print(f"  {name} run {repeat + 1}: {timed}", file=sys.stderr, flush=True)
        print(f"nproc {os.cpu_count()}, load average {os.getloadavg()[0]:.1f} at the end")
        for name, runs in results.items():
            print(summary(name, runs))
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
