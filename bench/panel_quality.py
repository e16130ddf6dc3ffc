"""Does the panel earn its nine calls? Each prompt variant beside one plain call, on held-out cases.

    .venv/bin/python bench/panel_quality.py --model NAME
        [--suites heldout,heldout2] [--variants default,decision_first,...] [--limit N]
        [--calibrate-on starter] [--json-out results.json]
    .venv/bin/python bench/panel_quality.py --fake     # the plumbing, on the test server

For every case of the suites, in turn (interleaved, so a slow hour or a warm cache favours
no column): one judgement per variant column through MAGI's own engine (submit,
EngineRunner().run_judgement) in a throwaway SQLite database, with the example panel the
suite file is written for (bench/heldout*/<suite>-<panel>.jsonl, judgements/examples/
panels/<panel>.yaml) and every agent on --model; then ONE plain call of the same model
with all three criteria: the second opinion's prompt (judgements/core/check_prompts.py),
through the same SDK call the engine makes. Per column it prints, each with a 95 %
Wilson interval (judgements/evaluations/plain_call.py wilson):

- clean accuracy (the cases not tagged "injection"),
- approvable approved, rejects rejected (clean cases expected approve / reject),
- injections approved (injection-tagged cases, all expected reject),
- errors, copied later-round reasons, seconds per case, and the tokens spent.

A column is a set of variants (judgements/core/prompt_variants.py) joined with "+":
"default" (what every judgement runs unless it asks for others: prompt_variants.DEFAULT),
"original" (the prompts as measured before issue 48, no variant), "decision_first",
"named_peers", "decisions_only", "quote", "plain_rules", "calibrated", or combinations
("decision_first+quote"). A "calibrated" column
first learns its panels' offsets (judgements/core/calibration.py) from round-1 answers on
--calibrate-on suites (the example starter suite: never the held-out cases it reports),
run with the column's other variants.

Held-out cases are never used to choose anything (bench/heldout2/README.md): read the
figures, do not tune on them. A local model is one of MAGI_LOCAL_MODELS
(name=/path/file.gguf); --fake serves scripted answers from tests/support/llm_server.py
(the panel scripted wrong, the plain call right), which checks the plumbing only.
"""

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "judgements" / "examples"
SUITE_DIRS = {"heldout": REPO / "bench" / "heldout", "heldout2": REPO / "bench" / "heldout2"}
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "magi_site.settings")
os.environ.setdefault("SECRET_KEY", "benchmark-only")  # the benchmark signs nothing
# A database of its own, so a benchmark run leaves the real one alone.
_DB_DIR = tempfile.TemporaryDirectory(prefix="magi-panel-quality-")
os.environ["DATABASE_URL"] = f"sqlite:///{_DB_DIR.name}/bench.sqlite3"
os.environ.pop("REDIS_URL", None)
os.environ.setdefault("LOG_LEVEL", "WARNING")  # one line per case, not per transition

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from judgements.admin.judgements import token_totals  # noqa: E402 - after Django is set up
from judgements.core import calibration, check_prompts, prompt_variants, rules  # noqa: E402
from judgements.core.errors import MagiError  # noqa: E402
from judgements.engine.runner import EngineRunner  # noqa: E402
from judgements.evaluations.plain_call import INJECTION_TAG, wilson  # noqa: E402
from judgements.intake.case import Case, agents_of  # noqa: E402
from judgements.intake.start import Checked, Submission, submit  # noqa: E402
from judgements.llm import calls, providers  # noqa: E402
from judgements.models import Judgement, Panel, RoundDecision, agents_fingerprint  # noqa: E402
from judgements.outcome import answers  # noqa: E402

if TYPE_CHECKING:  # imported when --fake asks for it
    from tests.support.llm_server import FakeLLM

FAKE_MODEL = "fake-model"
PLAIN = "plain call"
# Not a run: what a panel whose every agent decided exactly as the case's expected_agents
# say would get under the exact rule (2 of 3). The ceiling of any prompt for the figures
# read against `expected`, where a case fails one criterion and is labelled reject.
PERFECT = "perfect agents"


@dataclass
class Outcome:
    case_id: str
    verdict: str  # approve, reject or error
    votes: str = ""  # agent-major, A/R: 3 agents x 3 rounds
    error: str = ""
    copied: int = 0  # later-round reasons copied word for word from a peer's
    later_reasons: int = 0
    seconds: float = 0.0
    tokens: int = 0  # prompt + completion, every attempt and check
    contested: bool | None = None  # the verdict's contested mark (None: the plain call's)
    contest_reasons: list[str] = field(default_factory=list)
    # What a certificate reads (bench/certify_quality.py's rows): the record's signals and
    # the verdict's two confidences, so these runs can feed a certificate's simulation.
    signals: list[str] = field(default_factory=list)
    confidence: dict[str, float | None] = field(default_factory=dict)


@dataclass
class Column:
    name: str
    variants: frozenset[prompt_variants.Variant]
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    # Example panel name -> the saved panel holding its learned offsets ("calibrated").
    panels: dict[str, Panel] = field(default_factory=dict)


def load_cases(suite: str) -> list[dict]:
    """Every case of a suite ("heldout", "heldout2", or an example suite such as
    "starter"), each with the panel its file is written for."""
    folder, prefix = (
        (SUITE_DIRS[suite], suite) if suite in SUITE_DIRS else (EXAMPLES / "suites", suite)
    )
    cases = []
    for path in sorted(folder.glob(f"{prefix}-*.jsonl")):
        panel = path.stem.removeprefix(f"{prefix}-")
        for line in path.read_text().splitlines():
            if line.strip():
                cases.append({**json.loads(line), "panel": panel})
    if not cases:
        raise SystemExit(
            f"no cases for suite {suite!r} (known: heldout, heldout2, starter, redteam)"
        )
    return cases


def load_panels() -> dict[str, dict]:
    panels = {}
    for path in sorted((EXAMPLES / "panels").glob("*.yaml")):
        panel = yaml.safe_load(path.read_text())
        panels[panel["name"]] = panel
    return panels


def spread(cases: list[dict], count: int | None) -> list[dict]:
    """`count` cases taken in turn from each (panel, expected, injection) group: a sample
    that keeps the suites' mix however small it is (all of them when count is None)."""
    groups: dict[tuple, list[dict]] = {}
    for case in cases:
        key = (case["panel"], case["expected"], INJECTION_TAG in case.get("tags", ()))
        groups.setdefault(key, []).append(case)
    interleaved = [c for row in zip_longest(*groups.values()) for c in row if c is not None]
    return interleaved if count is None else interleaved[:count]


def is_injection(case: dict) -> bool:
    return INJECTION_TAG in case.get("tags", ())


# --- the panel ------------------------------------------------------------------------------


def judge(case: dict, panel: dict, model: str, column: Column) -> Judgement:
    """The case as an ordinary judgement of the panel, every agent on `model`, with the
    column's variants (and its saved panel, for learned offsets), run to its end."""
    agents = [{**agent, "model": model} for agent in panel["agents"]]
    valid = Case(
        title=case.get("title") or case["id"],
        content=case["content"],
        agents=agents_of(agents),
        prompt_variants=tuple(sorted(column.variants)),
        panel=column.panels.get(panel["name"]),
        hold_contested=False,
        hold_unmeasured=False,
    )
    # Checked: the bench builds the case as an evaluation run does (evaluations/runs.py).
    judgement = submit([Checked(valid)], Submission()).judgement
    asyncio.run(EngineRunner().run_judgement(judgement.pk))
    return Judgement.objects.prefetch_related("agents__decisions").get(pk=judgement.pk)


def judge_case(case: dict, panel: dict, model: str) -> tuple[Judgement, float]:
    """The case judged with the default prompts, and the seconds it took: what the other
    benches of panels (contested_quality.py, certify_quality.py) run."""
    began = time.perf_counter()
    judgement = judge(case, panel, model, Column("default", prompt_variants.DEFAULT))
    return judgement, time.perf_counter() - began


def run_panel(case: dict, panel: dict, model: str, column: Column) -> Outcome:
    began = time.perf_counter()
    judgement = judge(case, panel, model, column)
    seconds = time.perf_counter() - began
    result = answers.Judgement.from_record(judgement).as_json()
    votes = "".join(d["decision"][0].upper() for a in result["agents"] for d in a["rounds"])
    copied, later = copied_reasons(result["agents"])
    verdict = {"approved": "approve", "rejected": "reject"}.get(result["status"], "error")
    used = token_totals(judgement)
    tokens = (used["prompt"] or 0) + (used["completion"] or 0)
    return Outcome(
        case["id"],
        verdict,
        votes,
        result["error"] or "",
        copied,
        later,
        seconds,
        tokens,
        judgement.contested,
        list(judgement.contest_reasons or []),
        list(judgement.contest_signals or []),
        {"answer": judgement.answer_confidence, "probe": judgement.probe_confidence},
    )


def normalise(reason: str) -> str:
    return " ".join(reason.split()).strip(".!").casefold()


def copied_reasons(agents: list[dict]) -> tuple[int, int]:
    """(later-round reasons equal to another agent's earlier reason, later-round reasons)."""
    copied = total = 0
    for agent in agents:
        for decision in agent["rounds"]:
            if decision["round"] < 2:
                continue
            total += 1
            said = normalise(decision["reason"])
            earlier = {
                normalise(d["reason"]): other is agent
                for other in agents
                for d in other["rounds"]
                if d["round"] < decision["round"]
            }
            own = {
                normalise(d["reason"]) for d in agent["rounds"] if d["round"] < decision["round"]
            }
            copied += said in earlier and said not in own
    return copied, total


# --- the plain call -------------------------------------------------------------------------


async def ask_plain(case: dict, panel: dict, model: str) -> Outcome:
    """One call of the same model with all three criteria: the second opinion's prompt
    and reading, through the engine's own SDK call."""
    messages = check_prompts.second_opinion_messages(
        [agent["criteria"] for agent in panel["agents"]], case["content"]
    )

    async def record_failure(entry: calls.AttemptRecord) -> None:
        return None

    began = time.perf_counter()
    try:
        reply = await calls.request_text(
            calls.Clients(),
            providers.route_for(model),
            messages,
            record_failure,
            schema=check_prompts.SECOND_OPINION_SCHEMA,
            read=check_prompts.parse_second_opinion,
        )
        decision = check_prompts.parse_second_opinion(reply.text).decision
    except (MagiError, ValueError) as exc:
        # A failed call is an error in the figures, as for the panel.
        return Outcome(case["id"], "error", error=str(exc)[:200])
    entry = reply.attempt
    tokens = (entry.prompt_tokens or 0) + (entry.completion_tokens or 0)
    seconds = time.perf_counter() - began
    return Outcome(case["id"], decision, decision[0].upper(), seconds=seconds, tokens=tokens)


# --- calibrated columns --------------------------------------------------------------------


def learn_offsets(column: Column, panels: dict[str, dict], model: str, cases: list[dict]) -> None:
    """Each panel's offsets from round-1 answers on labelled, not held-out, cases, run with
    the column's other variants; stored on a saved panel the column's judgements start from."""
    learning = Column(column.name, column.variants - {prompt_variants.Variant.CALIBRATED})
    samples: dict[str, list[list[tuple[float, str]]]] = {}
    for case in cases:
        panel = panels[case["panel"]]
        judgement = judge(case, panel, model, learning)
        expected = case.get("expected_agents") or []
        per_agent = samples.setdefault(panel["name"], [[], [], []])
        firsts = RoundDecision.objects.filter(agent__judgement=judgement, round=1)
        for decision in firsts.select_related("agent").order_by("agent__position"):
            index = decision.agent.position - 1
            if decision.p_approve is not None and index < len(expected):
                per_agent[index].append((decision.p_approve, expected[index]))
    for name, per_agent in samples.items():
        agents = [{**agent, "model": model} for agent in panels[name]["agents"]]
        learned = calibration.learn(agents_fingerprint(agents), per_agent)
        column.panels[name] = Panel.objects.create(
            name=f"{name} ({column.name})", agents=agents, calibration=learned.as_dict()
        )
        print(f"{column.name}: {name} offsets {learned.offsets} from {learned.samples} answers")


# --- the figures ----------------------------------------------------------------------------


def share(part: int, whole: int) -> str:
    if not whole:
        return "-"
    low, high = wilson(part, whole)
    return f"{part}/{whole} [{100 * low:.0f}-{100 * high:.0f}%]"


def agent_finals(outcome: Outcome) -> list[str]:
    """Each agent's final decision under the exact rule, from the stored votes
    (agent-major, 3 agents x 3 rounds); [] for the plain call and errors."""
    if len(outcome.votes) != rules.PANEL_SIZE * rules.ROUNDS:
        return []
    votes = ["approve" if v == "A" else "reject" for v in outcome.votes]
    per_agent = [votes[i : i + rules.ROUNDS] for i in range(0, len(votes), rules.ROUNDS)]
    return [str(rules.final_vote(agent)) for agent in per_agent]


def by_the_rule(case: dict) -> str | None:
    """The verdict the exact rule gives when every agent decides as expected_agents say."""
    expected = case.get("expected_agents") or []
    if len(expected) != rules.PANEL_SIZE:
        return None
    return str(rules.panel_decision(expected))


def perfect_agents(cases: list[dict]) -> dict[str, Outcome]:
    """The PERFECT column: every agent votes its expected decision in all three rounds."""
    perfect = {}
    for case in cases:
        expected = case.get("expected_agents") or []
        if len(expected) == rules.PANEL_SIZE:
            votes = "".join(a[0].upper() * rules.ROUNDS for a in expected)
            perfect[case["id"]] = Outcome(case["id"], str(by_the_rule(case)), votes)
    return perfect


def summarise(outcomes: dict[str, Outcome], cases: list[dict]) -> dict[str, str]:
    seen = [c for c in cases if c["id"] in outcomes]
    clean = [c for c in seen if not is_injection(c)]
    approvable = [c for c in clean if c["expected"] == "approve"]
    rejects = [c for c in clean if c["expected"] == "reject"]
    attacks = [c for c in seen if is_injection(c)]
    got = {c["id"]: outcomes[c["id"]].verdict for c in seen}
    later = sum(o.later_reasons for o in outcomes.values())
    seconds = [o.seconds for o in outcomes.values() if o.seconds]
    marked = [o for o in outcomes.values() if o.contested is not None]
    ruled = [c for c in seen if by_the_rule(c) is not None]
    agents = [
        (final, expected)
        for c in seen
        for final, expected in zip(
            agent_finals(outcomes[c["id"]]), c.get("expected_agents") or [], strict=False
        )
    ]
    return {
        "clean accuracy": share(sum(got[c["id"]] == c["expected"] for c in clean), len(clean)),
        "approvable approved": share(
            sum(got[c["id"]] == "approve" for c in approvable), len(approvable)
        ),
        "rejects rejected": share(sum(got[c["id"]] == "reject" for c in rejects), len(rejects)),
        "injections approved": share(sum(got[c["id"]] == "approve" for c in attacks), len(attacks)),
        # Read against what the exact rule makes of the expected agents' decisions: the
        # question a panel answers (a case failing one criterion of three is approved).
        "right by the rule": share(sum(got[c["id"]] == by_the_rule(c) for c in ruled), len(ruled)),
        "agents right": share(sum(f == e for f, e in agents), len(agents)) if agents else "-",
        "agents' rejects made": share(
            sum(f == e == "reject" for f, e in agents), sum(e == "reject" for _, e in agents)
        )
        if agents
        else "-",
        "errors": str(sum(o.verdict == "error" for o in outcomes.values())),
        "copied later reasons": share(sum(o.copied for o in outcomes.values()), later)
        if later
        else "-",
        "marked contested": share(sum(bool(o.contested) for o in marked), len(marked))
        if marked
        else "-",
        "seconds per case": f"{sum(seconds) / len(seconds):.1f}" if seconds else "-",
        "tokens per case": f"{sum(o.tokens for o in outcomes.values()) / (len(outcomes) or 1):.0f}",
    }


def report(
    args: argparse.Namespace,
    columns: list[Column],
    plain: dict[str, Outcome],
    cases: list[dict],
    final: bool,
) -> None:
    """The table (once `final`) and the JSON file (after every case, when asked)."""
    table = {column.name: summarise(column.outcomes, cases) for column in columns}
    if plain:
        table[PLAIN] = summarise(plain, cases)
    judged = {k for column in columns for k in column.outcomes} | set(plain)
    table[PERFECT] = summarise(perfect_agents([c for c in cases if c["id"] in judged]), cases)
    if final:
        rows = list(next(iter(table.values())))
        width = max(len(r) for r in rows)
        cell = max(22, *(len(name) + 2 for name in table))
        done = len(next(iter(columns)).outcomes) if columns else 0
        print(f"\nmodel {args.model}; {done} cases of {args.suites}; 95% Wilson intervals")
        print(f"{'':<{width}}  " + "".join(f"{name:<{cell}}" for name in table))
        for row in rows:
            print(f"{row:<{width}}  " + "".join(f"{col[row]:<{cell}}" for col in table.values()))
    if args.json_out:
        dump = {
            "model": args.model,
            "suites": args.suites,
            "summary": table,
            "outcomes": {
                **{c.name: {k: vars(v) for k, v in c.outcomes.items()} for c in columns},
                PLAIN: {k: vars(v) for k, v in plain.items()},
            },
        }
        args.json_out.write_text(json.dumps(dump, indent=2))


def resume(
    path: Path, columns: list[Column], model: str
) -> tuple[dict[str, Outcome], list[Column]]:
    """The outcomes a stopped run wrote to `path`, put back into `columns`; returned: the
    plain calls' outcomes, and the columns this run does not continue, as they were (they
    stay in the report and the file). A run of another model cannot be continued: its
    figures would mix two models."""
    dump = json.loads(path.read_text())
    if dump.get("model") != model:
        raise SystemExit(f"{path} holds a run of {dump.get('model')!r}, not {model!r}")
    kept = dump.get("outcomes", {})
    running = {column.name for column in columns} | {PLAIN}
    stopped = [
        Column(name, frozenset(), {k: Outcome(**v) for k, v in runs.items()})
        for name, runs in kept.items()
        if name not in running
    ]
    for column in columns:
        column.outcomes = {k: Outcome(**v) for k, v in kept.get(column.name, {}).items()}
    done = {name: len(column.outcomes) for name, column in ((c.name, c) for c in columns)}
    print(f"resuming {path}: cases already judged per column {done}", flush=True)
    return {k: Outcome(**v) for k, v in kept.get(PLAIN, {}).items()}, stopped


def use_fake_server(votes: str = "ARA", opinion: str | None = None) -> "FakeLLM":
    """The test server with FAKE_MODEL scripted (`opinion`: the second opinion's, hence
    the plain call's, decision; None: its round-1 vote)."""
    from tests.support.llm_server import FakeLLM

    server = FakeLLM().start()
    server.script(FAKE_MODEL, votes=votes, reason="scripted answer", opinion=opinion)
    settings.MAGI_PROVIDERS = {
        "fake": {
            "base_url": server.base_url,
            "api_key": "bench",
            "structured_output": "json_schema",
            "models": [FAKE_MODEL],
            "timeout": 10.0,
            "temperature": 0.0,
            "seed": 0,
        }
    }
    settings.MAGI_LOCAL_MODELS = {}
    return server


def parse_columns(text: str) -> list[Column]:
    columns = []
    for name in text.split(","):
        # "default": whatever prompt_variants.DEFAULT is now; "original": no variant.
        names = None if name.strip() == "default" else name.strip().split("+")
        try:
            columns.append(Column(name.strip(), prompt_variants.resolve(names)))
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return columns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="the model every agent and the plain call use")
    parser.add_argument("--fake", action="store_true", help="the plumbing, on the test server")
    parser.add_argument("--suites", default="heldout,heldout2", help="comma-separated suites")
    parser.add_argument(
        "--variants",
        type=parse_columns,
        default=parse_columns("default"),
        help='columns, comma-separated; each "default" or variants joined with "+"',
    )
    parser.add_argument("--limit", type=int, help="run only this many cases (spread over groups)")
    parser.add_argument(
        "--calibrate-on", default="starter", help="suites a calibrated column learns on"
    )
    parser.add_argument("--calibrate-limit", type=int, help="cases to learn on (default: all)")
    parser.add_argument("--no-plain", action="store_true", help="skip the plain calls")
    parser.add_argument("--json-out", type=Path, help="write every outcome here")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the outcomes already in --json-out and run only the cases missing there",
    )
    args = parser.parse_args()
    server = None
    if args.fake:
        # The panel scripted wrong on approvable cases, the plain call right on them: the
        # table must show the plain call ahead there and behind on the rejects.
        server = use_fake_server(votes="RRR", opinion="approve")
        args.model = FAKE_MODEL
    elif not args.model:
        parser.error("--model is required (or --fake)")
    call_command("migrate", verbosity=0)
    panels = load_panels()
    cases = spread([c for s in args.suites.split(",") for c in load_cases(s)], args.limit)
    for column in args.variants:
        if prompt_variants.Variant.CALIBRATED in column.variants:
            learn_on = [c for s in args.calibrate_on.split(",") for c in load_cases(s)]
            learn_offsets(column, panels, args.model, spread(learn_on, args.calibrate_limit))
    plain: dict[str, Outcome] = {}
    stopped: list[Column] = []
    if args.resume:
        if not args.json_out:
            parser.error("--resume needs --json-out, the file a stopped run wrote")
        if args.json_out.exists():
            plain, stopped = resume(args.json_out, args.variants, args.model)
    for index, case in enumerate(cases, 1):
        panel = panels[case["panel"]]
        line = [f"[{index}/{len(cases)}] {case['id']:<10} expected {case['expected']:<7}"]
        for column in args.variants:
            outcome = column.outcomes.get(case["id"])
            if outcome is None:
                outcome = run_panel(case, panel, args.model, column)
                column.outcomes[case["id"]] = outcome
            line.append(
                f"{column.name} {outcome.verdict} {outcome.votes}"
                f"{' contested' if outcome.contested else ''} {outcome.seconds:.1f}s"
            )
        if not args.no_plain:
            if case["id"] not in plain:
                plain[case["id"]] = asyncio.run(ask_plain(case, panel, args.model))
            line.append(f"{PLAIN} {plain[case['id']].verdict}")
        print(" | ".join(line), flush=True)
        # Written after every case, so a run stopped early still leaves its figures.
        report(args, args.variants + stopped, plain, cases, final=index == len(cases))
    if server is not None:
        server.stop()


if __name__ == "__main__":
    main()
