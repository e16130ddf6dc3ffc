"""Escalation measured for real (issue 56): the bundled smollm2-135m panel escalating to
the same panel on qwen1.5b, on the local runtime, over a labelled suite.

    flock /work/locks/qwen.lock env \\
        MAGI_LOCAL_MODELS=qwen1.5b=$(../shared/tools/qwen-1.5b | tail -1) \\
        MAGI_LOCAL_THREADS=1 taskset -c 0 \\
        .venv/bin/python bench/cascade_real.py run --suites holdout --cases 12 --out cascade.jsonl
    .venv/bin/python bench/cascade_real.py analyse cascade.jsonl
    .venv/bin/python bench/cascade_real.py run --fake --cases 4 --out smoke.jsonl

`run`: for each example panel, a saved panel "<name> (cheap)" with every agent on
smollm2-135m that escalates to "<name> (strong)", the same agents on qwen1.5b. Each case
is submitted to the cheap panel through intake's one way in and run by the engine; a
verdict the cheap level does not keep (contested) starts the strong level through the
story's own entry, run to its end too. Where the cheap level kept its verdict, the strong
panel judges the case as well, alone, for the comparison with running only the strongest
level on everything (so qwen judges every case exactly once). One JSON line per case: each
level's verdict, mark, seconds and tokens, and the story's verdict in force.

`analyse` prints, as the shipped configuration runs (uncertified panels: a level keeps
what is not contested) and with MAGI_HOLD_UNMEASURED=true (a level keeps only what its
certificate vouches for; here none holds, so everything goes on and past the last level
to people): per level the share kept and the accuracy of what it kept (Clopper-Pearson
interval at 90 %), the seconds and tokens, the share left for people, beside the strong
level alone on every case.
"""

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from contested_analysis import SUITE_FILES, load_cases
from django.core.management import call_command

# Sets Django up on a throwaway SQLite database, as every bench of panels does.
from panel_quality import EXAMPLES, load_panels, spread

from judgements.admin.judgements import token_totals
from judgements.core.kept_verdicts import interval
from judgements.engine.runner import EngineRunner
from judgements.intake.case import Case, agents_of
from judgements.intake.start import Submission, submit
from judgements.llm.local.files import BUNDLED_MODEL_NAME
from judgements.models import Judgement, Panel

SUITE_FILES["holdout"] = (EXAMPLES / "suites", "holdout-")
STRONG_MODEL = "qwen1.5b"
VERDICTS = {"approved": "approve", "rejected": "reject"}


# Each level's model per agent (--fake: the test server's, the third cheap one rejecting).
MODELS = {"cheap": [BUNDLED_MODEL_NAME] * 3, "strong": [STRONG_MODEL] * 3}


def chain_for(panel: dict) -> Panel:
    """The cheap panel, escalating to the strong one (made once per example panel)."""
    name = panel["name"]
    found = Panel.objects.filter(name=f"{name} (cheap)").first()
    if found is not None:
        return found

    def agents(level: str) -> list[dict]:
        return [{**a, "model": m} for a, m in zip(panel["agents"], MODELS[level], strict=True)]

    strong = Panel.objects.create(name=f"{name} (strong)", agents=agents("strong"))
    return Panel.objects.create(name=f"{name} (cheap)", agents=agents("cheap"), escalate_to=strong)


def run_to_end(judgement_id: int) -> float:
    began = time.perf_counter()
    asyncio.run(EngineRunner().run_judgement(judgement_id))
    return time.perf_counter() - began


def level_record(judgement: Judgement, seconds: float) -> dict:
    used = token_totals(judgement)
    return {
        "judgement": judgement.pk,
        "verdict": VERDICTS.get(judgement.status, "error"),
        "trust": judgement.trust,
        "contested": judgement.contested,
        "escalated": judgement.escalated,
        "seconds": round(seconds, 2),
        "tokens": (used["prompt"] or 0) + (used["completion"] or 0),
    }


def submitted(case: dict, panel: Panel) -> Judgement:
    agents = agents_of(panel.agents)
    valid = Case(
        title=case.get("title") or case["id"],
        content=case["content"],
        agents=agents,
        panel=panel,
        hold_contested=False,
        hold_unmeasured=False,
    )
    return submit([valid], Submission()).judgement


def judge_story(case: dict, panel: dict) -> dict:
    cheap = chain_for(panel)
    root = submitted(case, cheap)
    first_seconds = run_to_end(root.pk)
    root = Judgement.objects.get(pk=root.pk)
    row = {"case": case["id"], "panel": panel["name"], "expected": case["expected"]}
    row["cheap"] = level_record(root, first_seconds)
    following = root.next_level
    escalated = following is not None
    if following is None:
        # Not escalated: the strong panel alone on the case, for the comparison.
        strong = cheap.escalate_to
        assert strong is not None  # chain_for made it
        following = submitted(case, strong)
    seconds = run_to_end(following.pk)
    row["strong"] = level_record(Judgement.objects.get(pk=following.pk), seconds)
    row["strong"]["as_level_2"] = escalated
    root = Judgement.objects.get(pk=root.pk)
    row["in_force"] = root.verdict
    return row


def use_fake_server() -> None:
    """The plumbing on the test server: the cheap level splits 2-1 (contested) on every
    case, the strong one approves."""
    from judgements.models.magi_settings import magi_settings
    from tests.support.llm_server import FakeLLM

    server = FakeLLM().start()
    MODELS["cheap"] = ["fake-cheap-a", "fake-cheap-b", "fake-cheap-c"]
    MODELS["strong"] = ["fake-strong"] * 3
    for model in (*MODELS["cheap"], "fake-strong"):
        server.script(model, votes="RRR" if model == "fake-cheap-c" else "AAA")
    magi_settings.MAGI_PROVIDERS = {
        "fake": {"base_url": server.base_url, "api_key": "bench", "models": server.models,
                 "structured_output": "json_schema", "timeout": 10.0, "temperature": 0.0,
                 "seed": 0, "concurrency": None, "discover": False}
    }  # fmt: skip
    magi_settings.MAGI_LOCAL_MODELS = {}


def run(args: argparse.Namespace) -> None:
    if args.fake:
        use_fake_server()
    call_command("migrate", verbosity=0)
    panels = load_panels()
    cases = spread([c for s in args.suites.split(",") for c in load_cases(s)], args.cases)
    with open(args.out, "a", encoding="utf-8") as out:
        for case in cases:
            row = judge_story(case, panels[case["panel"]])
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(json.dumps(row), flush=True)


def kept_line(
    name: str, kept: list[bool], reached: int, total: int, seconds: float, tokens: int
) -> str:
    right = sum(kept)
    if kept:
        low, high = interval(right, len(kept), 0.1)
        accuracy = f"{right}/{len(kept)} = {right / len(kept):.0%} ({low:.0%} to {high:.0%})"
    else:
        accuracy = "none kept"
    return (
        f"| {name} | {reached} | {len(kept)} ({len(kept) / total:.0%}) | {accuracy} | "
        f"{seconds:.0f} | {tokens:,} |"
    )


def analyse(args: argparse.Namespace) -> None:
    rows = [json.loads(line) for line in Path(args.file).read_text().splitlines() if line]
    total = len(rows)
    print(f"{total} cases\n")
    for mode, hold_unmeasured in (("as shipped", False), ("MAGI_HOLD_UNMEASURED=true", True)):
        print(f"### {mode}\n")
        print("| | reached | kept (share) | kept accuracy (90 % interval) | seconds | tokens |")
        print("| --- | --- | --- | --- | --- | --- |")
        first_kept, second_kept, people = [], [], 0
        second = [r for r in rows if not keeps(r["cheap"], hold_unmeasured)]
        for row in rows:
            right = row["cheap"]["verdict"] == row["expected"]
            if keeps(row["cheap"], hold_unmeasured):
                first_kept.append(right)
            elif keeps(row["strong"], hold_unmeasured):
                second_kept.append(row["strong"]["verdict"] == row["expected"])
            else:
                people += 1
        print(kept_line("level 1: smollm2-135m", first_kept, total, total,
                        sum(r["cheap"]["seconds"] for r in rows),
                        sum(r["cheap"]["tokens"] for r in rows)))  # fmt: skip
        print(kept_line("level 2: qwen1.5b", second_kept, len(second), total,
                        sum(r["strong"]["seconds"] for r in second),
                        sum(r["strong"]["tokens"] for r in second)))  # fmt: skip
        kept = first_kept + second_kept
        print(kept_line("the cascade", kept, total, total,
                        sum(r["cheap"]["seconds"] for r in rows)
                        + sum(r["strong"]["seconds"] for r in second),
                        sum(r["cheap"]["tokens"] for r in rows)
                        + sum(r["strong"]["tokens"] for r in second)))  # fmt: skip
        alone = [r["strong"]["verdict"] == r["expected"] for r in rows]
        print(kept_line("qwen1.5b alone, every verdict", alone, total, total,
                        sum(r["strong"]["seconds"] for r in rows),
                        sum(r["strong"]["tokens"] for r in rows)))  # fmt: skip
        print(f"\nleft for people: {people} of {total} ({people / total:.0%})\n")
    escalated = sum(1 for r in rows if r["strong"]["as_level_2"])
    print(f"escalated for real through the engine: {escalated} of {total}")


def keeps(level: dict, hold_unmeasured: bool) -> bool:
    """panels/escalation_chain.py keeps, on a record: an error is never kept."""
    if level["verdict"] == "error" or level["contested"]:
        return False
    return not (level["trust"] == "unmeasured" and hold_unmeasured)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    running = commands.add_parser("run")
    running.add_argument("--suites", default="holdout")
    running.add_argument("--cases", type=int, default=12)
    running.add_argument("--out", required=True)
    running.add_argument("--fake", action="store_true", help="the plumbing, on the test server")
    reading = commands.add_parser("analyse")
    reading.add_argument("file")
    args = parser.parse_args()
    run(args) if args.command == "run" else analyse(args)


if __name__ == "__main__":
    main()
