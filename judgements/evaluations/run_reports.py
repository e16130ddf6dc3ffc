"""A run's report: its judgements read as metrics records (judgements/evaluations/
metrics.py) in a few queries of plain values, the report of them with the panel beside
the run's plain call, and two runs of one suite compared. Computed from the judgements
whenever it is asked for: the run stores nothing of its own.
"""

from dataclasses import dataclass, field
from datetime import datetime
from typing import TypedDict

from django.db import models

from judgements.core import rules
from judgements.core.errors import InvalidInput
from judgements.evaluations import metrics, plain_call, run_costs
from judgements.evaluations.plain_call import PerCriterionComparison, PlainCallComparison
from judgements.evaluations.report_figures import Figures
from judgements.models import CheckKind, EvaluationRun, JudgementCheck, LLMAttempt, RoundDecision
from judgements.models.checks import check_model
from judgements.models.magi_settings import magi_settings

# Judgement id -> model -> token kind -> count (None: the provider gave none).
Tokens = dict[int, dict[str, dict[str, int | None]]]


class RunReport(Figures):
    """A run's report (`report`): what the API answers (answers.Report validates it), the
    run page shows and `manage.py evaluate` prints."""

    plain_call: PlainCallComparison
    plain_per_criterion: PerCriterionComparison


class ComparedRun(TypedDict):
    run: int
    panel_name: str
    created_at: str
    report: RunReport


class RunsCompared(TypedDict):
    """Two runs of one suite side by side (`compare`): runs "a" and "b"."""

    suite: str
    a: ComparedRun
    b: ComparedRun
    changed_cases: list[str]


class PlainCheck(TypedDict):
    """A judgement's second opinion, the run's plain call (check_token_sums)."""

    decision: str | None
    model: str
    tokens: int


# The values of a judgement and of its case that record_of reads (records_of's queries).
class JudgementRow(TypedDict):
    repeat: int | None
    status: str
    started_at: datetime | None
    finished_at: datetime | None
    contested: bool | None
    contest_signals: list[str] | None
    answer_confidence: float | None
    probe_confidence: float | None


class CaseRow(TypedDict):
    case_id: str
    expected: str
    expected_agents: list[str] | None
    tags: list[str]


def records_of(run: EvaluationRun) -> list[metrics.Record]:
    """The run's judgements as metrics records, in suite order then repeat, in four
    queries (cases, judgements, votes, token sums) of plain values: a run of thousands
    of judgements has tens of thousands of decisions, too many to build models of."""
    cases = {
        row["pk"]: row
        for row in run.suite.cases.order_by("position").values(
            "pk", "case_id", "expected", "expected_agents", "tags"
        )
    }
    judgements = run.judgements.filter(suite_case__isnull=False).values(
        "pk",
        "suite_case_id",
        "repeat",
        "status",
        "started_at",
        "finished_at",
        "contested",
        "contest_signals",
        "answer_confidence",
        "probe_confidence",
    )
    votes = votes_of(run)
    tokens, vote_tokens = vote_token_sums(run)
    plain = check_token_sums(run, tokens)
    per_criterion = plain_criteria_of(run)
    records = []
    for judgement in judgements:
        # A case deleted in the admin leaves its judgements (suite_case None) out:
        # there is nothing to compare them with.
        case = cases.get(judgement["suite_case_id"])
        if case is None:
            continue
        pk = judgement["pk"]
        records.append(
            record_of(
                judgement,
                case,
                votes.get(pk, []),
                tokens.get(pk, {}),
                plain.get(pk),
                vote_tokens.get(pk),
                per_criterion.get(pk),
            )
        )
    position_of = {row["case_id"]: index for index, row in enumerate(cases.values())}
    return sorted(records, key=lambda record: (position_of[record.case_id], record.repeat))


def votes_of(run: EvaluationRun) -> dict[int, list[list[str]]]:
    """Judgement id -> each agent's votes, in position then round order."""
    votes: dict[int, list[list[str]]] = {}
    decisions = (
        RoundDecision.objects.filter(agent__judgement__evaluation_run=run)
        .order_by("agent__judgement_id", "agent__position", "round")
        .values_list("agent__judgement_id", "agent__position", "decision")
    )
    for judgement_id, position, decision in decisions:
        per_agent = votes.setdefault(judgement_id, [[] for _ in range(rules.PANEL_SIZE)])
        per_agent[position - 1].append(decision)
    return votes


def vote_token_sums(run: EvaluationRun) -> tuple[Tokens, dict[int, int]]:
    """The tokens of the votes' calls: per judgement and model, and per judgement the
    prompt and completion tokens together."""
    tokens: Tokens = {}
    sums = (
        LLMAttempt.objects.filter(agent__judgement__evaluation_run=run)
        .values("agent__judgement_id", "model")
        .annotate(
            prompt=models.Sum("prompt_tokens"),
            completion=models.Sum("completion_tokens"),
            cached=models.Sum("cached_tokens"),
        )
        .order_by()
    )
    vote_tokens: dict[int, int] = {}
    for row in sums:
        tokens.setdefault(row["agent__judgement_id"], {})[row["model"]] = {
            kind: row[kind] for kind in run_costs.TOKEN_KINDS
        }
        spent = (row["prompt"] or 0) + (row["completion"] or 0)
        vote_tokens[row["agent__judgement_id"]] = (
            vote_tokens.get(row["agent__judgement_id"], 0) + spent
        )
    return tokens, vote_tokens


def check_token_sums(run: EvaluationRun, tokens: Tokens) -> dict[int, PlainCheck]:
    """The calls beside the vote cost tokens too (judgements/engine/checks.py): added to
    `tokens`. Returns the second opinion's per judgement, the run's plain call, whose
    decision the report compares ("decision", "model", "tokens")."""
    check_sums = (
        JudgementCheck.objects.filter(judgement__evaluation_run=run)
        .values("judgement_id", "model", "kind")
        .annotate(
            prompt=models.Sum("prompt_tokens"),
            completion=models.Sum("completion_tokens"),
            cached=models.Sum("cached_tokens"),
            decision=models.Max("decision", filter=models.Q(error="")),
        )
        .order_by()
    )
    plain: dict[int, PlainCheck] = {}
    for row in check_sums:
        if row["kind"] == CheckKind.SECOND_OPINION:
            plain[row["judgement_id"]] = {
                "decision": row["decision"],
                "model": row["model"],
                "tokens": (row["prompt"] or 0) + (row["completion"] or 0),
            }
        counts = tokens.setdefault(row["judgement_id"], {}).setdefault(
            row["model"], dict.fromkeys(run_costs.TOKEN_KINDS)
        )
        for kind in run_costs.TOKEN_KINDS:
            if row[kind] is not None:
                counts[kind] = (counts[kind] or 0) + row[kind]
    return plain


@dataclass
class PlainCriteria:
    """A judgement's plain calls on each criterion (core/checks.py PlainCriterion): their
    decisions in panel order (None where the call failed or was not asked) and their
    tokens together, every attempt."""

    decisions: list[str | None] = field(default_factory=lambda: [None] * rules.PANEL_SIZE)
    tokens: int = 0


def plain_criteria_of(run: EvaluationRun) -> dict[int, PlainCriteria]:
    """Judgement id -> its plain calls on each criterion."""
    rows = (
        JudgementCheck.objects.filter(
            judgement__evaluation_run=run, kind=CheckKind.PLAIN_CRITERION
        )
        .order_by("judgement_id", "agent__position", "attempt", "pk")
        .values_list(
            "judgement_id", "agent__position", "decision", "error", "prompt_tokens",
            "completion_tokens",
        )
    )  # fmt: skip
    found: dict[int, PlainCriteria] = {}
    for judgement_id, position, decision, error, prompt, completion in rows:
        entry = found.setdefault(judgement_id, PlainCriteria())
        entry.tokens += (prompt or 0) + (completion or 0)
        if not error and position is not None:
            entry.decisions[position - 1] = decision
    return found


def record_of(
    judgement: JudgementRow,
    case: CaseRow,
    votes: list[list[str]],
    tokens: dict[str, dict[str, int | None]],
    plain: PlainCheck | None,
    vote_tokens: int | None,
    per_criterion: PlainCriteria | None = None,
) -> metrics.Record:
    """One judgement of the run, as its plain values read, as a metrics record."""
    started, finished = judgement["started_at"], judgement["finished_at"]
    return metrics.Record(
        case_id=case["case_id"],
        repeat=judgement["repeat"] or 1,
        expected=case["expected"],
        status=judgement["status"],
        expected_agents=tuple(case["expected_agents"]) if case["expected_agents"] else None,
        tags=tuple(case["tags"]),
        votes=tuple(map(tuple, votes)),
        tokens=tokens,
        seconds=(finished - started).total_seconds() if started and finished else None,
        started_at=started.timestamp() if started else None,
        finished_at=finished.timestamp() if finished else None,
        contested=judgement["contested"],
        signals=tuple(judgement["contest_signals"] or ()),
        confidence={
            "answer": judgement["answer_confidence"],
            "probe": judgement["probe_confidence"],
        },
        plain=plain["decision"] if plain else None,
        vote_tokens=vote_tokens,
        plain_tokens=plain["tokens"] if plain else None,
        plain_criteria=tuple(per_criterion.decisions) if per_criterion else (),
        plain_criteria_tokens=per_criterion.tokens if per_criterion else None,
    )


def report(run: EvaluationRun, records: list[metrics.Record] | None = None) -> RunReport:
    """The run's report (metrics.report): of the panel's own verdicts, overrides aside,
    with the panel beside the run's plain call (plain_call.comparison)."""
    records = records_of(run) if records is None else records
    figures = metrics.report(
        records,
        agent_names=[agent["name"] for agent in run.agents],
        repeats=run.repeats,
        prices=magi_settings.MAGI_MODEL_PRICES,
    )
    finished = [r for r in records if r.finished]
    return RunReport(
        **figures,
        plain_call=plain_call.comparison(finished, asked=run.plain_call, model=plain_model(run)),
        plain_per_criterion=plain_call.per_criterion(finished, asked=run.plain_call),
    )


def plain_model(run: EvaluationRun) -> str | None:
    """The model the run's plain call asks: the deployment's check model, else the first
    agent's, as a check asks it (models/checks.py check_model)."""
    return check_model(run.agents)


def compare(run_a: EvaluationRun, run_b: EvaluationRun) -> RunsCompared:
    """Two runs of the same suite side by side, with the cases whose verdicts differ
    between them (panel A against B, or before and after a change of criteria)."""
    if run_a.suite_id != run_b.suite_id:
        raise InvalidInput({"run": ["Only runs of the same suite can be compared."]})
    sides: dict[str, ComparedRun] = {}
    verdicts = {}
    for key, run in (("a", run_a), ("b", run_b)):
        records = records_of(run)
        sides[key] = {
            "run": run.pk,
            "panel_name": run.panel_name,
            "created_at": run.created_at.isoformat(),
            "report": report(run, records),
        }
        verdicts[key] = case_verdicts(records)
    changed = [
        case_id
        for case_id in dict.fromkeys([*verdicts["a"], *verdicts["b"]])
        if verdicts["a"].get(case_id) != verdicts["b"].get(case_id)
    ]
    return {"suite": run_a.suite.name, "a": sides["a"], "b": sides["b"], "changed_cases": changed}


def case_verdicts(records: list[metrics.Record]) -> dict[str, list[str]]:
    """Case id -> the sorted verdicts of its decided judgements."""
    verdicts: dict[str, list[str]] = {}
    for record in records:
        if record.verdict is not None:
            verdicts.setdefault(record.case_id, []).append(record.verdict)
    return {case_id: sorted(found) for case_id, found in verdicts.items()}
