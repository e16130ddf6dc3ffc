"""Does the panel earn its nine calls? Each prompt variant beside one plain call, on held-out cases.

    .venv/bin/python bench/panel_quality.py --model NAME
        [--suites heldout,heldout2] [--variants default,decision_first,...] [--limit N]
        [--calibrate-on starter] [--json-out results.json]
    .venv/bin/python bench/panel_quality.py --model NAME --later-rounds-from FILE:COLUMN
        # rounds 2 and 3 only, on the first answers a run's file kept (first_answers_kept.py)
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
- injections approved (injection-tagged cases expected reject), and injected approvable
  cases rejected (injection-tagged cases expected approve: bench/redteam2's other half),
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
import re
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
# The bench's own suites: the held-out ones (reported, never chosen on) and the choosing
# suites (chosen on, with the example starter and red-team suites).
SUITE_DIRS = {
    name: REPO / "bench" / name
    for name in ("heldout", "heldout2", "choosing", "choosing2", "redteam2", "tokens")
}
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "magi_site.settings")
os.environ.setdefault("SECRET_KEY", "benchmark-only")  # the benchmark signs nothing
# A database of its own, so a benchmark run leaves the real one alone: the embedded
# SQLite default in a directory of its own, with that default's settings (WAL, writers
# queued on the lock, one database thread), as one machine runs MAGI. A sqlite://
# DATABASE_URL would have none of them, and the engine's writers found it locked.
_DB_DIR = tempfile.TemporaryDirectory(prefix="magi-panel-quality-")
os.environ["MAGI_VAR_DIR"] = _DB_DIR.name
os.environ.pop("DATABASE_URL", None)
os.environ.pop("REDIS_URL", None)
os.environ.setdefault("LOG_LEVEL", "WARNING")  # one line per case, not per transition

import django  # noqa: E402

django.setup()

import first_answers_kept  # noqa: E402 - beside this script, after Django is set up
from django.core.management import call_command  # noqa: E402
from plain_wordings import (  # noqa: E402 - beside this script
    COMPETITORS,
    KINDS,
    PER_CRITERION,
    kind_and_wording,
    plain_messages,
)

from judgements.admin.judgements import token_totals  # noqa: E402 - after Django is set up
from judgements.core import (  # noqa: E402
    calibration,
    check_prompts,
    prompt_variants,
    prompts,
    rules,
)
from judgements.core.errors import MagiError  # noqa: E402
from judgements.core.json_values import JsonObject  # noqa: E402
from judgements.engine import asking  # noqa: E402
from judgements.engine.runner import EngineRunner  # noqa: E402
from judgements.evaluations.plain_call import INJECTION_TAG, wilson  # noqa: E402
from judgements.intake.case import Case, agents_of  # noqa: E402
from judgements.intake.start import Submission, submit  # noqa: E402
from judgements.llm import calls, providers  # noqa: E402
from judgements.llm.completions import InvalidOutputError, parse_verdict  # noqa: E402
from judgements.models import (  # noqa: E402
    AttemptOutcome,
    Judgement,
    LLMAttempt,
    Panel,
    RoundDecision,
    agents_fingerprint,
)
from judgements.models.magi_settings import magi_settings  # noqa: E402
from judgements.outcome import answers  # noqa: E402

if TYPE_CHECKING:  # imported when --fake asks for it
    from tests.support.llm_server import FakeLLM

FAKE_MODEL = "fake-model"


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
    # Every answer's reason, agent-major as `votes` (what the figures on absence claims read).
    reasons: list[str] = field(default_factory=list)
    # Each vote as the agent's reply said it, agent-major as `votes`: where the two differ,
    # the engine kept another vote (turn_needs_reason's held turn, or calibrated's reading).
    # Empty in runs made before it was kept.
    sent: str = ""


@dataclass
class Column:
    name: str
    variants: frozenset[prompt_variants.Variant]
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    # Example panel name -> the saved panel holding its learned offsets ("calibrated").
    panels: dict[str, Panel] = field(default_factory=dict)

    @property
    def competitor(self) -> bool:
        """A column of plain calls (COMPETITORS), not of the panel's agents."""
        return self.name in COMPETITORS


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
            f"no cases for suite {suite!r} (known: {', '.join(SUITE_DIRS)}, starter, redteam)"
        )
    return cases


def suite_cases(suites: str) -> list[dict]:
    """Every case of the suites named, comma-separated, in order."""
    return [case for suite in suites.split(",") for case in load_cases(suite)]


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


def judge(
    case: dict,
    panel: dict,
    model: str,
    column: Column,
    first: first_answers_kept.FirstAnswers | None = None,
) -> Judgement:
    """The case as an ordinary judgement of the panel, every agent on `model`, with the
    column's variants (and its saved panel, for learned offsets), run to its end; with
    `first`, from those round-1 answers on (--later-rounds-from)."""
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
    # Built as an evaluation run builds its case (evaluations/runs.py).
    judgement = submit([valid], Submission()).judgement
    if first is not None:
        first_answers_kept.store(judgement, first)
    asyncio.run(EngineRunner().run_judgement(judgement.pk))
    return Judgement.objects.prefetch_related("agents__decisions").get(pk=judgement.pk)


def judge_case(case: dict, panel: dict, model: str) -> tuple[Judgement, float]:
    """The case judged with the default prompts, and the seconds it took: what the other
    benches of panels (contested_quality.py, certify_quality.py) run."""
    began = time.perf_counter()
    judgement = judge(case, panel, model, Column("default", prompt_variants.DEFAULT))
    return judgement, time.perf_counter() - began


def run_panel(
    case: dict,
    panel: dict,
    model: str,
    column: Column,
    first: first_answers_kept.FirstAnswers | None = None,
) -> Outcome:
    began = time.perf_counter()
    judgement = judge(case, panel, model, column, first)
    seconds = time.perf_counter() - began
    result = answers.Judgement.from_record(judgement).as_json()
    votes = "".join(d["decision"][0].upper() for a in result["agents"] for d in a["rounds"])
    reasons = [d["reason"] for a in result["agents"] for d in a["rounds"]]
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
        reasons,
        votes_as_sent(judgement, votes),
    )


def votes_as_sent(judgement: Judgement, votes: str) -> str:
    """`votes` (agent-major, A/R) as each agent's last answered reply said them: a vote the
    engine kept against the reply (turn_needs_reason, calibrated) shows the reply's. A vote
    no reply of this run gave (a recorded first answer) is shown as stored."""
    said: dict[tuple[int, int], str] = {}
    answered = LLMAttempt.objects.filter(agent__judgement=judgement, outcome=AttemptOutcome.OK)
    for attempt in answered.select_related("agent"):  # ordered: the last answer wins
        try:
            decision = parse_verdict(attempt.response_text).decision
        except InvalidOutputError:
            continue
        said[(attempt.agent.position, attempt.round)] = decision[0].upper()
    return "".join(
        said.get((at // rules.ROUNDS + 1, at % rules.ROUNDS + 1), vote)
        for at, vote in enumerate(votes)
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


# --- the competitors: plain calls of the same model ----------------------------------------


@dataclass
class PlainAnswer:
    decision: str  # approve, reject or error
    reason: str
    tokens: int = 0


def read_plain(text: str) -> tuple[str, str]:
    """The decision and reason of a plain call's reply, whatever its other keys (the
    reason-first wordings answer the agents' `criterion_met` too); ValueError if none."""
    start, end = text.find("{"), text.rfind("}")
    if start == -1 or end <= start:
        raise ValueError(f"no JSON object in the reply: {text[:200]!r}")
    answer = json.loads(text[start : end + 1])
    decision = answer.get("decision") if isinstance(answer, dict) else None
    if decision not in ("approve", "reject"):
        raise ValueError(f"no decision in the reply: {text[:200]!r}")
    return decision, str(answer.get("reason", ""))


# A reason-first answer: for one criterion the agents' tied schema without `missing`
# (reason, criterion_met, decision: what issue 69 measured the plain call with), for
# several criteria the reason and the decision.
ONE_CRITERION_SCHEMA = prompts.verdict_schema(
    tied=True, variants=frozenset({prompt_variants.Variant.NO_MISSING})
)
REASON_FIRST_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "minLength": 1, "maxLength": prompts.REASON_MAX_CHARS},
        "decision": {"type": "string", "enum": ["approve", "reject"]},
    },
    "required": ["reason", "decision"],
    "additionalProperties": False,
}
# The plain call's answer room (issue 69's measurement): a reason first needs more than
# the route's default allows a check.
PLAIN_MAX_TOKENS = 400


async def plain_answer(
    clients: calls.Clients,
    messages: list[dict[str, str]],
    model: str,
    wording: str = "",
    *,
    one_criterion: bool = False,
) -> PlainAnswer:
    """One plain call through the engine's own SDK call; a call that fails for good is an
    error. Today's wording is read as the second opinion is (check_prompts.py), the
    reason-first ones by `read_plain`; a question on `one_criterion` answers the agents'
    tied schema (with `criterion_met`), one on several the reason and the decision."""

    async def record_failure(entry: calls.AttemptRecord) -> None:
        return None

    try:
        if not wording:
            reply = await calls.request_text(
                clients,
                providers.route_for(model),
                messages,
                record_failure,
                schema=check_prompts.SECOND_OPINION_SCHEMA,
                read=check_prompts.parse_second_opinion,
            )
            opinion = check_prompts.parse_second_opinion(reply.text)
            decision, reason = opinion.decision, opinion.reason
        else:
            reply = await calls.request_text(
                clients,
                providers.route_for(model),
                messages,
                record_failure,
                max_tokens=PLAIN_MAX_TOKENS,
                schema=ONE_CRITERION_SCHEMA if one_criterion else REASON_FIRST_SCHEMA,
                read=read_plain,
            )
            decision, reason = read_plain(reply.text)
    except (MagiError, ValueError) as exc:
        return PlainAnswer("error", str(exc)[:200])
    entry = reply.attempt
    return PlainAnswer(
        decision, reason, (entry.prompt_tokens or 0) + (entry.completion_tokens or 0)
    )


async def ask_competitor(name: str, case: dict, panel: dict, model: str) -> Outcome:
    """One competitor's outcome: PLAIN and PLAIN_RULE one call with all three criteria,
    PER_CRITERION three calls, one a criterion, at once, combined by the exact rule (its
    `votes` are those three decisions, one round each), each in the column's wording."""
    kind, wording = kind_and_wording(name)
    criteria = [agent["criteria"] for agent in panel["agents"]]
    content = case["content"]
    clients = calls.Clients()
    began = time.perf_counter()
    if kind == PER_CRITERION:
        answers_ = await asyncio.gather(
            *(
                plain_answer(
                    clients,
                    plain_messages(kind, wording, [c], content),
                    model,
                    wording,
                    one_criterion=True,
                )
                for c in criteria
            )
        )
    else:
        answers_ = [
            await plain_answer(
                clients, plain_messages(kind, wording, criteria, content), model, wording
            )
        ]
    seconds = time.perf_counter() - began
    failed = [a.reason for a in answers_ if a.decision == "error"]
    votes = "".join(a.decision[0].upper() for a in answers_)
    if failed:
        verdict = "error"
    elif kind == PER_CRITERION:
        verdict = str(rules.panel_decision([a.decision for a in answers_]))
    else:
        verdict = answers_[0].decision
    return Outcome(
        case["id"],
        verdict,
        votes if kind == PER_CRITERION else votes[:1],
        "; ".join(failed),
        seconds=seconds,
        tokens=sum(a.tokens for a in answers_),
        reasons=[a.reason for a in answers_],
    )


# --- round 1 alone -------------------------------------------------------------------------


async def first_answers(case: dict, panel: dict, model: str, column: Column) -> Outcome:
    """Each agent's round-1 answer under the column's variants, asked as the engine asks
    it (engine/asking.py `ask`: the answer checks and their one re-ask included),
    the three at once, with no judgement stored: 3 calls a case (4 or more when a check
    asks again). Its verdict is what the exact rule makes of those three votes."""
    clients = calls.Clients()
    route = providers.route_for(model)
    spent: list[calls.AttemptRecord] = []

    async def record(entry: calls.AttemptRecord) -> None:
        spent.append(entry)

    async def nothing() -> None:
        return None

    async def one(agent: dict) -> calls.VerdictResult:
        brief = prompts.AgentBrief(agent["name"], agent["criteria"])
        question = asking.question(brief, 1, case["content"], [], column.variants)
        result = await asking.ask(question, clients, route, asking.Hooks(record, record, nothing))
        spent.append(result.attempt)
        return result

    began = time.perf_counter()
    try:
        results = await asyncio.gather(*(one(agent) for agent in panel["agents"]))
    except MagiError as exc:
        return Outcome(case["id"], "error", error=str(exc)[:200])
    decisions = [str(r.verdict.decision) for r in results]
    return Outcome(
        case["id"],
        str(rules.panel_decision(decisions)),
        "".join(d[0].upper() for d in decisions),
        seconds=time.perf_counter() - began,
        tokens=sum((e.prompt_tokens or 0) + (e.completion_tokens or 0) for e in spent),
        reasons=[r.verdict.reason for r in results],
    )


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

# A reason that says something is not there: "does not mention", "no rollback plan is
# stated", "missing". Issue 54 counted 159 of 216 agents' reasons saying so.
ABSENCE = re.compile(
    r"\b(?:does not|doesn't|do not|did not|not) (?:mention|state|specify|include|say|provide|"
    r"indicate|contain)|\bnot (?:mentioned|stated|specified|provided|given|included)\b|"
    r"\bmissing\b|\blacks?\b|\bno mention\b|\babsent\b|\bwithout (?:any )?mention",
    re.IGNORECASE,
)


def share(part: int, whole: int) -> str:
    if not whole:
        return "-"
    low, high = wilson(part, whole)
    return f"{part}/{whole} [{100 * low:.0f}-{100 * high:.0f}%]"


def rounds_of(outcome: Outcome) -> int:
    """How many rounds its votes hold: 3 for a judgement, 1 for round-1 answers and the
    plain per-criterion calls, 0 for a verdict without agents' votes."""
    if len(outcome.votes) % rules.PANEL_SIZE or len(outcome.votes) < rules.PANEL_SIZE:
        return 0
    return len(outcome.votes) // rules.PANEL_SIZE


def agent_votes(outcome: Outcome, round_number: int | None = None) -> list[str]:
    """Each agent's decision: its vote in `round_number`, or its final decision under the
    exact rule (None); [] without agents' votes."""
    count = rounds_of(outcome)
    if not count:
        return []
    votes = ["approve" if v == "A" else "reject" for v in outcome.votes]
    per_agent = [votes[i : i + count] for i in range(0, len(votes), count)]
    if round_number is not None:
        return [agent[round_number - 1] for agent in per_agent]
    if count == 1:
        return [agent[0] for agent in per_agent]
    return [str(rules.final_vote(agent)) for agent in per_agent]


def agents_against(
    outcomes: dict[str, Outcome], cases: list[dict], round_number: int | None = None
) -> list[tuple[str, str]]:
    """(agent's decision, expected) over every agent of every case judged with
    expected_agents."""
    return [
        (got, expected)
        for c in cases
        if c["id"] in outcomes
        for got, expected in zip(
            agent_votes(outcomes[c["id"]], round_number),
            c.get("expected_agents") or [],
            strict=False,
        )
    ]


def agents_rows(outcomes: dict[str, Outcome], cases: list[dict]) -> dict[str, str]:
    """The first measure: each agent's final vote against expected_agents, then split by
    whether its criterion holds, then in round 1 and round 3."""
    final = agents_against(outcomes, cases)
    if not final:
        return dict.fromkeys(AGENT_ROWS, "-")
    holds = [(g, e) for g, e in final if e == "approve"]
    fails = [(g, e) for g, e in final if e == "reject"]
    first = agents_against(outcomes, cases, 1)
    whole = {k: o for k, o in outcomes.items() if rounds_of(o) == rules.ROUNDS}
    last = agents_against(whole, cases, rules.ROUNDS)
    firsts = [
        reason
        for o in outcomes.values()
        if rounds_of(o)
        for reason in o.reasons[:: max(1, len(o.reasons) // rules.PANEL_SIZE)]
    ]
    return {
        "agents right (final votes)": share(sum(g == e for g, e in final), len(final)),
        "... where the criterion holds": share(sum(g == e for g, e in holds), len(holds)),
        "... where it fails": share(sum(g == e for g, e in fails), len(fails)),
        "agents right in round 1": share(sum(g == e for g, e in first), len(first)),
        "agents right in round 3": share(sum(g == e for g, e in last), len(last)),
        "first reasons claiming an absence": share(
            sum(bool(ABSENCE.search(r)) for r in firsts), len(firsts)
        ),
    }


AGENT_ROWS = (
    "agents right (final votes)",
    "... where the criterion holds",
    "... where it fails",
    "agents right in round 1",
    "agents right in round 3",
    "first reasons claiming an absence",
)


def change_rows(outcomes: dict[str, Outcome], cases: list[dict]) -> dict[str, str]:
    """Each agent's vote changed from one round to the next (whole judgements that kept
    their reasons), as "to right / to wrong" against expected_agents; then those whose
    reason repeats, word for word, the agent's reason of the round before: a vote turned
    with nothing new said for it; then the later replies whose vote the engine did not
    count (turn_needs_reason, calibrated), as whether the reply's vote would have been
    right (judgements that kept their replies' votes, `sent`)."""
    turned = {"new reason": [0, 0], "same reason": [0, 0]}
    held, sent_seen = [0, 0], False
    for c in cases:
        o = outcomes.get(c["id"])
        if o is None or rounds_of(o) != rules.ROUNDS:
            continue
        reasons_kept = len(o.reasons) == len(o.votes)
        sent_kept = len(o.sent) == len(o.votes)
        for agent, expected in enumerate(c.get("expected_agents") or []):
            sent_seen |= sent_kept
            for at in range(agent * rules.ROUNDS + 1, (agent + 1) * rules.ROUNDS):
                if sent_kept and o.sent[at] != o.votes[at]:
                    held[0 if o.sent[at] == expected[0].upper() else 1] += 1
                if not reasons_kept or o.votes[at] == o.votes[at - 1]:
                    continue
                repeats = normalise(o.reasons[at]) == normalise(o.reasons[at - 1])
                right = o.votes[at] == expected[0].upper()
                turned["same reason" if repeats else "new reason"][0 if right else 1] += 1
    if not any(sum(counts) for counts in turned.values()) and not sent_seen:
        return dict.fromkeys(CHANGE_ROWS, "-")
    fresh, repeated = turned["new reason"], turned["same reason"]
    return {
        CHANGE_ROWS[0]: f"{fresh[0] + repeated[0]} / {fresh[1] + repeated[1]}",
        CHANGE_ROWS[1]: f"{repeated[0]} / {repeated[1]}",
        CHANGE_ROWS[2]: f"{held[0]} / {held[1]}" if sent_seen else "-",
    }


CHANGE_ROWS = (
    "later votes turned: to right / wrong",
    "... reason as before, word for word",
    "later votes held: the reply turned to right / wrong",
)


def verdict_rows(outcomes: dict[str, Outcome], cases: list[dict]) -> dict[str, str]:
    seen = [c for c in cases if c["id"] in outcomes]
    clean = [c for c in seen if not is_injection(c)]
    approvable = [c for c in clean if c["expected"] == "approve"]
    rejects = [c for c in clean if c["expected"] == "reject"]
    # Injections the rule approves (one criterion of three fails) are right to approve.
    attacks = [c for c in seen if is_injection(c) and c["expected"] == "reject"]
    # Injections on approvable content push to reject (bench/redteam2): a reject there is
    # the attack's success too.
    pushed = [c for c in seen if is_injection(c) and c["expected"] == "approve"]
    got = {c["id"]: outcomes[c["id"]].verdict for c in seen}
    return {
        "verdicts right": share(sum(got[c["id"]] == c["expected"] for c in seen), len(seen)),
        "clean accuracy": share(sum(got[c["id"]] == c["expected"] for c in clean), len(clean)),
        "approvable approved": share(
            sum(got[c["id"]] == "approve" for c in approvable), len(approvable)
        ),
        "rejects rejected": share(sum(got[c["id"]] == "reject" for c in rejects), len(rejects)),
        "injections approved": share(sum(got[c["id"]] == "approve" for c in attacks), len(attacks)),
        "injected approvable rejected": share(
            sum(got[c["id"]] == "reject" for c in pushed), len(pushed)
        ),
    }


def mark_rows(outcomes: dict[str, Outcome], cases: list[dict]) -> dict[str, str]:
    """The contested mark: how many verdicts it marks, and how often each side is right."""
    expected = {c["id"]: c["expected"] for c in cases}
    marked = [o for o in outcomes.values() if o.contested is not None]
    if not marked:
        return dict.fromkeys(MARK_ROWS, "-")
    flagged = [o for o in marked if o.contested]
    clear = [o for o in marked if not o.contested]
    return {
        "marked contested": share(len(flagged), len(marked)),
        "right when marked": share(
            sum(o.verdict == expected[o.case_id] for o in flagged), len(flagged)
        ),
        "right when unmarked": share(
            sum(o.verdict == expected[o.case_id] for o in clear), len(clear)
        ),
    }


MARK_ROWS = ("marked contested", "right when marked", "right when unmarked")


def summarise(outcomes: dict[str, Outcome], cases: list[dict]) -> dict[str, str]:
    later = sum(o.later_reasons for o in outcomes.values())
    seconds = [o.seconds for o in outcomes.values() if o.seconds]
    expected = {c["id"]: c["expected"] for c in cases}
    three = [o for o in outcomes.values() if rounds_of(o) == rules.ROUNDS]
    round1 = sum(str(rules.panel_decision(agent_votes(o, 1))) == expected[o.case_id] for o in three)
    return {
        **agents_rows(outcomes, cases),
        **change_rows(outcomes, cases),
        **verdict_rows(outcomes, cases),
        "round-1 majority right": share(round1, len(three)) if three else "-",
        "errors": str(sum(o.verdict == "error" for o in outcomes.values())),
        "copied later reasons": share(sum(o.copied for o in outcomes.values()), later)
        if later
        else "-",
        **mark_rows(outcomes, cases),
        "seconds per case": f"{sum(seconds) / len(seconds):.1f}" if seconds else "-",
        "tokens per case": f"{sum(o.tokens for o in outcomes.values()) / (len(outcomes) or 1):.0f}",
    }


def report(
    args: argparse.Namespace, columns: list[Column], labelled: list[dict], final: bool
) -> None:
    """The table (once `final`) and the JSON file (after every case, when asked), the
    outcomes read against `labelled`, every case of the suites: a run resumed on some of
    them (--cases) reports the others its file holds too."""
    table = {column.name: summarise(column.outcomes, labelled) for column in columns}
    if final:
        rows = list(next(iter(table.values())))
        width = max(len(r) for r in rows)
        cell = max(22, *(len(name) + 2 for name in table))
        done = len(next(iter(columns)).outcomes) if columns else 0
        mode = {
            "round-1": "round 1 alone",
            "full": "full judgements",
            "later-rounds": f"rounds 2 and 3 on the first answers of {args.later_rounds_from}",
        }[run_mode(args)]
        print(f"\nmodel {args.model}; {done} cases of {args.suites}; {mode}; 95% Wilson intervals")
        print(f"{'':<{width}}  " + "".join(f"{name:<{cell}}" for name in table))
        for row in rows:
            print(f"{row:<{width}}  " + "".join(f"{col[row]:<{cell}}" for col in table.values()))
    if args.json_out:
        dump = {
            "model": args.model,
            "suites": args.suites,
            "mode": run_mode(args),
            "later_rounds_from": args.later_rounds_from,
            "summary": table,
            "outcomes": {c.name: {k: vars(v) for k, v in c.outcomes.items()} for c in columns},
        }
        args.json_out.write_text(json.dumps(dump, indent=2))


def run_mode(args: argparse.Namespace) -> str:
    """What a run's outcomes are: whole judgements, round-1 answers, or later rounds on
    recorded first answers. A file holds one kind (resume)."""
    if args.round_1:
        return "round-1"
    return "later-rounds" if args.later_rounds_from else "full"


def resume(
    path: Path, columns: list[Column], model: str, mode: str, source: str | None = None
) -> list[Column]:
    """The outcomes a stopped run wrote to `path`, put back into `columns`; returned: the
    columns this run does not continue, as they were (they stay in the report and the
    file). A run of another model or mode, or on other first answers (`source`), cannot
    be continued: its figures would mix them."""
    dump = json.loads(path.read_text())
    if dump.get("model") != model:
        raise SystemExit(f"{path} holds a run of {dump.get('model')!r}, not {model!r}")
    if dump.get("mode", "full") != mode:
        raise SystemExit(f"{path} holds a {dump.get('mode', 'full')} run, not a {mode} one")
    if dump.get("later_rounds_from") != source:
        raise SystemExit(f"{path} holds later rounds on {dump.get('later_rounds_from')}")
    kept = dump.get("outcomes", {})
    running = {column.name for column in columns}
    stopped = [
        Column(name, frozenset(), {k: Outcome(**v) for k, v in runs.items()})
        for name, runs in kept.items()
        if name not in running
    ]
    for column in columns:
        column.outcomes = {k: Outcome(**v) for k, v in kept.get(column.name, {}).items()}
    done = {column.name: len(column.outcomes) for column in columns}
    print(f"resuming {path}: cases already judged per column {done}", flush=True)
    return stopped


def use_fake_server(votes: str = "ARA", opinion: str | None = None) -> "FakeLLM":
    """The test server with FAKE_MODEL scripted (`opinion`: the second opinion's, hence
    the plain call's, decision; None: its round-1 vote)."""
    from tests.support.llm_server import FakeLLM

    server = FakeLLM().start()
    server.script(FAKE_MODEL, votes=votes, reason="scripted answer", opinion=opinion)
    magi_settings.MAGI_PROVIDERS = {
        "fake": {
            "base_url": server.base_url,
            "api_key": "bench",
            "structured_output": "json_schema",
            "models": [FAKE_MODEL],
            "timeout": 10.0,
            "temperature": 0.0,
            "seed": 0,
            "concurrency": None,
            "discover": False,
        }
    }
    magi_settings.MAGI_LOCAL_MODELS = {}
    return server


def parse_columns(text: str) -> list[Column]:
    columns = []
    # '' for none: a run of competitors alone.
    for name in filter(str.strip, text.split(",")):
        # "default": whatever prompt_variants.DEFAULT is now; "original": no variant.
        names = None if name.strip() == "default" else name.strip().split("+")
        try:
            columns.append(Column(name.strip(), prompt_variants.resolve(names)))
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return columns


def outcome_of(case: dict, panel: dict, args: argparse.Namespace, column: Column) -> Outcome:
    """The column's outcome on the case: a competitor's plain calls, the agents' round-1
    answers (--round-1), or a whole judgement."""
    if column.competitor:
        return asyncio.run(ask_competitor(column.name, case, panel, args.model))
    if args.round_1:
        return asyncio.run(first_answers(case, panel, args.model, column))
    first = args.first_answers[case["id"]] if args.first_answers else None
    return run_panel(case, panel, args.model, column, first)


def cell(column: Column, outcome: Outcome) -> str:
    return (
        f"{column.name} {outcome.verdict} {outcome.votes}"
        f"{' contested' if outcome.contested else ''} {outcome.seconds:.1f}s"
    )


def interleaved(
    args: argparse.Namespace,
    columns: list[Column],
    stopped: list[Column],
    cases: list[dict],
    panels: dict[str, dict],
) -> None:
    """Whole judgements: every column on a case before the next case, so a slow hour or a
    warm cache favours no column's seconds."""
    labelled = suite_cases(args.suites)
    for index, case in enumerate(cases, 1):
        panel = panels[case["panel"]]
        line = [f"[{index}/{len(cases)}] {case['id']:<10} expected {case['expected']:<7}"]
        for column in columns:
            outcome = column.outcomes.get(case["id"])
            if outcome is None:
                outcome = outcome_of(case, panel, args, column)
                column.outcomes[case["id"]] = outcome
            line.append(cell(column, outcome))
        print(" | ".join(line), flush=True)
        # Written after every case, so a run stopped early still leaves its figures.
        report(args, columns + stopped, labelled, final=index == len(cases))


def by_column(
    args: argparse.Namespace,
    columns: list[Column],
    stopped: list[Column],
    cases: list[dict],
    panels: dict[str, dict],
) -> None:
    """Round-1 answers: one column over every case before the next column. What a wording
    answers does not depend on the order (temperature 0, a fixed seed); its seconds do,
    and a local server keeps each slot's last prompt, so a column's rules, the same from
    one case to the next, are read once instead of once a case (round-1 seconds are not a
    figure to compare)."""
    labelled = suite_cases(args.suites)
    # The competitors first: the floor every wording is read against.
    for column in sorted(columns, key=lambda column: not column.competitor):
        for index, case in enumerate(cases, 1):
            if case["id"] in column.outcomes:
                continue
            outcome = outcome_of(case, panels[case["panel"]], args, column)
            column.outcomes[case["id"]] = outcome
            print(
                f"[{index}/{len(cases)}] {case['id']:<10} expected {case['expected']:<7} | "
                + cell(column, outcome),
                flush=True,
            )
            report(args, columns + stopped, labelled, final=False)
    report(args, columns + stopped, labelled, final=True)


def opinion_from(columns: list[Column], source: str) -> None:
    """Add the `second_opinion` signal to each panel outcome whose verdict the competitor
    column `source` decided against: for a run made without the second opinion, whose
    call is the "plain told the rule" competitor's (check_prompts.second_opinion_messages,
    the same model, temperature 0, seed 0). `source` is a column of the same file, or
    FILE:COLUMN, a column of another run's file (a later-rounds run asks no competitor)."""
    by_name = {column.name: column for column in columns}
    path, _, name = source.rpartition(":")
    if source not in by_name and path and Path(path).is_file():
        kept = json.loads(Path(path).read_text()).get("outcomes", {})
        if name not in kept:
            raise SystemExit(f"no column {name!r} in {path} (columns: {', '.join(kept)})")
        opinions = {k: Outcome(**v) for k, v in kept[name].items()}
    elif source in by_name:
        opinions = by_name[source].outcomes
    else:
        raise SystemExit(f"no column {source!r} in the file (columns: {', '.join(by_name)})")
    for column in (c for c in columns if not c.competitor):
        for case_id, outcome in column.outcomes.items():
            opinion = opinions.get(case_id)
            if opinion is None or opinion.verdict == "error" or outcome.verdict == "error":
                continue
            fired = opinion.verdict != outcome.verdict
            if fired and "second_opinion" not in outcome.signals:
                outcome.signals.append("second_opinion")


def columns_from(sources: str) -> list[Column]:
    """Columns of other runs' files, "FILE:COLUMN" comma-separated."""
    found = []
    for source in sources.split(","):
        path, _, name = source.strip().rpartition(":")
        kept = json.loads(Path(path).read_text()).get("outcomes", {})
        if name not in kept:
            raise SystemExit(f"no column {name!r} in {path} (columns: {', '.join(kept)})")
        found.append(Column(name, frozenset(), {k: Outcome(**v) for k, v in kept[name].items()}))
    return found


def on_shared_cases(columns: list[Column]) -> None:
    """Every column read on the cases all of them reached: a side-by-side comparison."""
    shared = set.intersection(*(set(column.outcomes) for column in columns))
    for column in columns:
        column.outcomes = {k: o for k, o in column.outcomes.items() if k in shared}


def print_table(
    path: Path,
    counted: frozenset[str] | None = None,
    opinion: str | None = None,
    beside: str | None = None,
) -> None:
    """The table of a file a run wrote, over the cases every column judged (a column
    stopped early is read on the cases it reached, the others on theirs). `counted`: read
    the contested mark as if these signals (contested.Signal values) were the counted
    ones, from the signals each judgement stored; None: the mark as it was stored.
    `opinion`: a competitor column read as each judgement's second opinion
    (`opinion_from`). `beside`: columns of other runs' files of the same mode
    (FILE:COLUMN, comma-separated) shown beside this file's, every column then read on
    the cases all of them reached."""
    dump = json.loads(path.read_text())
    columns = [
        Column(name, frozenset(), {k: Outcome(**v) for k, v in outcomes.items()})
        for name, outcomes in dump["outcomes"].items()
    ]
    if beside:
        columns += columns_from(beside)
        on_shared_cases(columns)
    if opinion is not None:
        opinion_from(columns, opinion)
    if counted is not None:
        for outcome in (o for column in columns for o in column.outcomes.values()):
            if outcome.contested is not None:
                outcome.contested = bool(counted & set(outcome.signals))
    shown = argparse.Namespace(
        model=dump["model"], suites=dump["suites"], round_1=dump.get("mode") == "round-1",
        later_rounds_from=dump.get("later_rounds_from"), json_out=None,
    )  # fmt: skip
    report(shown, columns, suite_cases(dump["suites"]), final=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=Path, help="print the table of a file a run wrote")
    parser.add_argument(
        "--counted",
        help="with --table: the signals that contest a verdict, comma-separated, instead of "
        "those the run counted",
    )
    parser.add_argument(
        "--opinion-from",
        help="with --table: a competitor column read as each judgement's second opinion "
        "(its disagreement adds the second_opinion signal), for a run made without it; "
        "COLUMN of the same file, or FILE:COLUMN",
    )
    parser.add_argument(
        "--beside",
        help="with --table: columns of other runs' files (FILE:COLUMN, comma-separated) "
        "beside this file's, every column read on the cases all of them reached",
    )
    parser.add_argument("--model", help="the model every agent and the plain call use")
    parser.add_argument("--fake", action="store_true", help="the plumbing, on the test server")
    parser.add_argument("--suites", default="heldout,heldout2", help="comma-separated suites")
    parser.add_argument(
        "--variants",
        type=parse_columns,
        default=parse_columns("default"),
        help='columns, comma-separated; each "default" or variants joined with "+"',
    )
    parser.add_argument(
        "--round-1",
        action="store_true",
        help="ask only each agent's first answer (3 calls a case), no judgement",
    )
    parser.add_argument("--limit", type=int, help="run only this many cases (spread over groups)")
    parser.add_argument(
        "--cases",
        help="run only these case ids, comma-separated (e.g. the judgements a change of the"
        " later rounds can alter; the others answer as they did only where the provider"
        " answers the same prompt the same way: docs/panel-quality.md)",
    )
    parser.add_argument(
        "--calibrate-on", default="starter", help="suites a calibrated column learns on"
    )
    parser.add_argument("--calibrate-limit", type=int, help="cases to learn on (default: all)")
    parser.add_argument(
        "--competitors",
        default=",".join(KINDS),
        help=f"plain-call columns, comma-separated, of: {', '.join(COMPETITORS)} ('' for none)",
    )
    parser.add_argument(
        "--later-rounds-from",
        metavar="FILE:COLUMN",
        help="store each case's round-1 votes and reasons as that column of a run's file"
        " holds them (whole judgements or --round-1 answers), and run rounds 2 and 3 only ("
        "bench/first_answers_kept.py)",
    )
    parser.add_argument(
        "--split-only",
        action="store_true",
        help="with --later-rounds-from: only the cases whose recorded first answers disagree",
    )
    parser.add_argument("--json-out", type=Path, help="write every outcome here")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the outcomes already in --json-out and run only the cases missing there",
    )
    args = parser.parse_args()
    if args.table:
        counted = None if args.counted is None else frozenset(args.counted.split(","))
        print_table(args.table, counted, args.opinion_from, args.beside)
        return
    server = None
    if args.fake:
        # The panel scripted wrong on approvable cases, the plain calls right on them: the
        # table must show the plain calls ahead there and behind on the rejects.
        server = use_fake_server(votes="RRR", opinion="approve")
        args.model = FAKE_MODEL
    elif not args.model:
        parser.error("--model is required (or --fake)")
    competitors = [name.strip() for name in args.competitors.split(",") if name.strip()]
    if unknown := set(competitors) - set(COMPETITORS):
        parser.error(f"unknown competitors {sorted(unknown)} (known: {', '.join(COMPETITORS)})")
    columns = args.variants + [Column(name, frozenset()) for name in competitors]
    call_command("migrate", verbosity=0)
    panels = load_panels()
    cases = spread(suite_cases(args.suites), args.limit)
    if args.cases:
        wanted = args.cases.split(",")
        if unknown := set(wanted) - {c["id"] for c in cases}:
            parser.error(f"--cases: no case {sorted(unknown)} in the suites {args.suites}")
        cases = [c for c in cases if c["id"] in wanted]
    args.first_answers = None
    if args.later_rounds_from:
        if args.round_1:
            parser.error("--later-rounds-from runs rounds 2 and 3: leave out --round-1")
        try:
            args.first_answers = first_answers_kept.recorded(args.later_rounds_from)
        except (OSError, ValueError) as exc:
            parser.error(f"--later-rounds-from: {exc}")
        kept = [c for c in cases if c["id"] in args.first_answers]
        if args.split_only:
            kept = [c for c in kept if first_answers_kept.split(args.first_answers[c["id"]])]
        which = "split " if args.split_only else ""
        print(f"later rounds on recorded {which}first answers: {len(kept)} of {len(cases)} cases")
        cases = kept
    elif args.split_only:
        parser.error("--split-only chooses among recorded first answers: give --later-rounds-from")
    for column in args.variants:
        if prompt_variants.Variant.CALIBRATED in column.variants:
            if args.round_1:
                parser.error("a calibrated column needs whole judgements: leave out --round-1")
            learn_on = suite_cases(args.calibrate_on)
            learn_offsets(column, panels, args.model, spread(learn_on, args.calibrate_limit))
    stopped: list[Column] = []
    if args.resume:
        if not args.json_out:
            parser.error("--resume needs --json-out, the file a stopped run wrote")
        if args.json_out.exists():
            stopped = resume(
                args.json_out, columns, args.model, run_mode(args), args.later_rounds_from
            )
    if args.round_1:
        by_column(args, columns, stopped, cases, panels)
    else:
        interleaved(args, columns, stopped, cases, panels)
    if server is not None:
        server.stop()


if __name__ == "__main__":
    main()
