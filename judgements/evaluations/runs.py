"""Evaluation runs: a panel over a suite, each case `repeats` times, as ordinary queued
judgements linked to the run; its progress and its report (judgements/evaluations/metrics.py).

The run stores nothing of its own beyond what it was asked to do: its judgements run on
the same engine as any other (and survive restarts the same way), and the report is
computed from them whenever it is asked for.
"""

import csv
import io
import math
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import models, transaction
from django.utils import timezone

from judgements.core import prompt_variants, rules, text
from judgements.core.csv_cells import spreadsheet_safe, yes_no
from judgements.core.errors import InvalidInput
from judgements.engine import lifecycle
from judgements.evaluations import answers, metrics, plain_call
from judgements.intake import rows, saved_panels, schemas, start
from judgements.intake.case import Case, agents_of
from judgements.intake.schemas import NAME_MAX_CHARS, TITLE_MAX_CHARS
from judgements.models import (
    FINISHED_STATUSES,
    ApiToken,
    CheckKind,
    EvaluationRun,
    JudgementCheck,
    LLMAttempt,
    Panel,
    RoundDecision,
    Status,
    Suite,
    SuiteCase,
)

MAX_REPEATS = 20


# --- starting ---------------------------------------------------------------------------


def start_run(
    *,
    panel: Panel | None,
    agents: list[dict[str, Any]],
    panel_name: str,
    suite: Suite,
    repeats: int,
    creator: User | None,
    api_token: ApiToken | None = None,
    plain_call: bool = True,
    variants: list[str] | None = None,
) -> EvaluationRun:
    """Queue one judgement per case and repeat, in one transaction, and wake the engine.
    The run (and its judgements) belongs to its panel's team, else its token's.

    `plain_call`: ask, beside each case, one plain call of the model with all three
    criteria (the second opinion's), so the report shows the panel against it; on unless
    turned off. `variants`: the prompt variants its judgements run
    (judgements/core/prompt_variants.py); None: the saved panel's, or the site's default
    (intake/saved_panels.py variants_for); []: none.

    `agents` are the three agents as they will run (a panel's, or typed ones), validated
    like a judgement's: errors name "agents[1].model", "repeat" or "panel_name".
    """
    errors: dict[str, list[str]] = {}
    if isinstance(repeats, bool) or not isinstance(repeats, int) or not 1 <= repeats <= MAX_REPEATS:
        errors["repeat"] = [f"Must be a whole number from 1 to {MAX_REPEATS}."]
    try:
        named = saved_panels.variants_for(panel) if variants is None else variants
        chosen = sorted(prompt_variants.parse(named))
    except ValueError as exc:
        errors["variants"] = [str(exc)[0].upper() + str(exc)[1:] + "."]
    except InvalidInput as exc:
        errors.update(exc.errors)
    if not isinstance(panel_name, str) or not panel_name.strip():
        errors["panel_name"] = ["The panel needs a name."]
    elif text.char_count(panel_name.strip()) > NAME_MAX_CHARS:
        errors["panel_name"] = [f"Ensure the name has at most {NAME_MAX_CHARS} characters."]
    cases = list(suite.cases.order_by("position"))
    if not cases:
        raise InvalidInput({"suite": ["The suite holds no cases."]})
    try:
        # The agents are checked inside a real case, so "agents[1].model" reads as it
        # does for a judgement; the content is the suite's first (it passed these rules
        # when the suite was imported).
        probe = {"title": "evaluation", "content": cases[0].content, "agents": agents}
        checked = schemas.validated(schemas.Case, probe)
        clean_agents = [agent.model_dump() for agent in checked.agents or ()]
    except InvalidInput as exc:
        agent_errors = {f: m for f, m in exc.errors.items() if f.startswith("agents")}
        errors.update(agent_errors)
        if len(agent_errors) < len(exc.errors):
            # The content no longer passes (MAGI_CONTENT_MAX_CHARS lowered since).
            other = [" ".join(m) for f, m in exc.errors.items() if f not in agent_errors]
            errors["suite"] = [f"Its first case is no longer valid: {' '.join(other)}"]
    if errors:
        raise InvalidInput(errors)
    with transaction.atomic():
        run = EvaluationRun.objects.create(
            panel=panel,
            panel_name=panel_name.strip(),
            agents=clean_agents,
            suite=suite,
            repeats=repeats,
            creator=creator,
            team=rows.team_for(panel, api_token, None),
            plain_call=bool(plain_call),
            prompt_variants=[str(variant) for variant in chosen],
        )
        # Repeat by repeat, so the engine (which claims the oldest first) covers every
        # case before any twice.
        # Refused over the limit of unfinished runs (the run above rolls back with it).
        start.submit(
            [
                start.Checked(run_case(run, case, repeat, clean_agents))
                for repeat in range(1, run.repeats + 1)
                for case in cases
            ],
            start.Submission(creator=creator, run=run),
        )
    return run


def run_case(
    run: EvaluationRun, case: SuiteCase, repeat: int, agents: list[dict[str, str]]
) -> Case:
    """A suite case as one judgement of the run. Runs measure a panel: they never hold
    a contested verdict for a person."""
    return Case(
        title=title_of(run.suite.name, case),
        content=case.content,
        agents=agents_of(agents),
        panel=run.panel,
        hold_contested=False,
        hold_unmeasured=False,
        suite_case=case,
        repeat=repeat,
        plain_call=run.plain_call,
        prompt_variants=tuple(run.prompt_variants),
    )


def title_of(suite_name: str, case: SuiteCase) -> str:
    """The case's title, or "<suite>/<case id>" (cut to a title's length with an ellipsis)."""
    if case.title:
        return case.title
    title = f"{suite_name}/{case.case_id}"
    return title if len(title) <= TITLE_MAX_CHARS else title[: TITLE_MAX_CHARS - 1] + "…"


def cancel(run: EvaluationRun, user: User) -> list[int]:
    """Stop a run (whoever may see it may: its creator and staff): its unfinished
    judgements end in error naming who cancelled (lifecycle.cancel_run, which tells their
    open pages). Returns the ids ended."""
    return lifecycle.cancel_run(run, user)


# --- following --------------------------------------------------------------------------


def progress(run: EvaluationRun) -> dict[str, Any]:
    """How far the run is: counts of its judgements ("total", "finished", "errors",
    "running", "done"), the votes stored in each round ("rounds": [{"round", "votes",
    "of"}]) and, while it runs, an estimate of the seconds left ("seconds_left", None
    until a vote is in): the time since its first start per vote stored, times the votes
    still due (those of judgements not ended)."""
    counts = run.judgements.aggregate(
        total=models.Count("pk"),
        finished=models.Count("pk", filter=models.Q(status__in=FINISHED_STATUSES)),
        errors=models.Count("pk", filter=models.Q(status=Status.ERROR)),
        running=models.Count("pk", filter=models.Q(status=Status.JUDGING)),
        first_start=models.Min("started_at"),
    )
    first_start = counts.pop("first_start")
    per_round = dict(
        RoundDecision.objects.filter(agent__judgement__evaluation_run=run)
        .values_list("round")
        .annotate(votes=models.Count("pk"))
        .values_list("round", "votes")
    )
    votes_each = rules.PANEL_SIZE * counts["total"]
    rounds = [
        {"round": n, "votes": per_round.get(n, 0), "of": votes_each}
        for n in range(1, rules.ROUNDS + 1)
    ]
    done = counts["finished"] == counts["total"]
    return {
        **counts,
        "done": done,
        "rounds": rounds,
        "seconds_left": None if done else seconds_left(run, first_start, sum(per_round.values())),
    }


def seconds_left(run: EvaluationRun, first_start: datetime | None, votes_stored: int) -> int | None:
    if first_start is None or not votes_stored:
        return None
    # Votes still due: every round of the judgements not ended, less what they hold.
    unfinished = run.judgements.exclude(status__in=FINISHED_STATUSES)
    stored_there = RoundDecision.objects.filter(agent__judgement__in=unfinished).count()
    due = rules.PANEL_SIZE * rules.ROUNDS * unfinished.count() - stored_there
    elapsed = (timezone.now() - first_start).total_seconds()
    return math.ceil(elapsed / votes_stored * due)


def as_result(run: EvaluationRun) -> answers.EvaluationRun:
    """A run as the API and the page's JSON export give it: what ran, its progress and,
    once done, its report."""
    state = progress(run)
    return answers.EvaluationRun.from_record(run, state, report(run) if state["done"] else None)


CSV_COLUMNS = ("case", "repeat", "title", "expected", "verdict", "right", "contested", "url")


def as_csv(run: EvaluationRun) -> str:
    """A row per judgement of the run, in suite order: what was expected, the panel's
    verdict and whether it was right (blank while it runs or when it ended in error)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    judgements = run.judgements.select_related("suite_case").order_by(
        "suite_case__position", "repeat", "pk"
    )
    for judgement in judgements:
        case = judgement.suite_case
        decision = judgement.decision
        right = None if decision is None or case is None else decision == case.expected
        writer.writerow(
            [
                case.case_id if case else "",
                judgement.repeat,
                spreadsheet_safe(judgement.title),
                case.expected if case else "",
                judgement.status,
                yes_no(right),
                yes_no(judgement.contested),
                judgement.get_absolute_url(),
            ]
        )
    return out.getvalue()


# --- reporting --------------------------------------------------------------------------


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
    votes: dict[int, list[list[str]]] = {}
    decisions = (
        RoundDecision.objects.filter(agent__judgement__evaluation_run=run)
        .order_by("agent__judgement_id", "agent__position", "round")
        .values_list("agent__judgement_id", "agent__position", "decision")
    )
    for judgement_id, position, decision in decisions:
        per_agent = votes.setdefault(judgement_id, [[] for _ in range(rules.PANEL_SIZE)])
        per_agent[position - 1].append(decision)
    tokens: dict[int, dict[str, dict[str, int | None]]] = {}
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
            kind: row[kind] for kind in metrics.TOKEN_KINDS
        }
        spent = (row["prompt"] or 0) + (row["completion"] or 0)
        vote_tokens[row["agent__judgement_id"]] = (
            vote_tokens.get(row["agent__judgement_id"], 0) + spent
        )
    # The calls beside the vote cost tokens too (judgements/engine/deliberation.py); the
    # second opinion's is the run's plain call, whose decision the report compares.
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
    plain: dict[int, dict[str, Any]] = {}
    for row in check_sums:
        if row["kind"] == CheckKind.SECOND_OPINION:
            plain[row["judgement_id"]] = {
                "decision": row["decision"],
                "model": row["model"],
                "tokens": (row["prompt"] or 0) + (row["completion"] or 0),
            }
        counts = tokens.setdefault(row["judgement_id"], {}).setdefault(
            row["model"], dict.fromkeys(metrics.TOKEN_KINDS)
        )
        for kind in metrics.TOKEN_KINDS:
            if row[kind] is not None:
                counts[kind] = (counts[kind] or 0) + row[kind]
    records = []
    for judgement in judgements:
        # A case deleted in the admin leaves its judgements (suite_case None) out:
        # there is nothing to compare them with.
        case = cases.get(judgement["suite_case_id"])
        if case is None:
            continue
        started, finished = judgement["started_at"], judgement["finished_at"]
        records.append(
            metrics.Record(
                case_id=case["case_id"],
                repeat=judgement["repeat"] or 1,
                expected=case["expected"],
                status=judgement["status"],
                expected_agents=tuple(case["expected_agents"]) if case["expected_agents"] else None,
                tags=tuple(case["tags"]),
                votes=tuple(map(tuple, votes.get(judgement["pk"], ()))),
                tokens=tokens.get(judgement["pk"], {}),
                seconds=(finished - started).total_seconds() if started and finished else None,
                started_at=started.timestamp() if started else None,
                finished_at=finished.timestamp() if finished else None,
                contested=judgement["contested"],
                signals=tuple(judgement["contest_signals"] or ()),
                confidence={
                    "answer": judgement["answer_confidence"],
                    "probe": judgement["probe_confidence"],
                },
                plain=plain.get(judgement["pk"], {}).get("decision"),
                vote_tokens=vote_tokens.get(judgement["pk"]),
                plain_tokens=plain.get(judgement["pk"], {}).get("tokens"),
            )
        )
    position_of = {row["case_id"]: index for index, row in enumerate(cases.values())}
    return sorted(records, key=lambda record: (position_of[record.case_id], record.repeat))


def report(run: EvaluationRun, records: list[metrics.Record] | None = None) -> dict[str, Any]:
    """The run's report (metrics.report): of the panel's own verdicts, overrides aside,
    with the panel beside the run's plain call (plain_call.comparison)."""
    records = records_of(run) if records is None else records
    figures = metrics.report(
        records,
        agent_names=[agent["name"] for agent in run.agents],
        repeats=run.repeats,
        prices=settings.MAGI_MODEL_PRICES,
    )
    return figures | {
        "plain_call": plain_call.comparison(
            [r for r in records if r.finished], asked=run.plain_call, model=plain_model(run)
        )
    }


def plain_model(run: EvaluationRun) -> str | None:
    """The model the run's plain call asks: the deployment's check model, else the first
    agent's (engine/deliberation.py check_model)."""
    return settings.MAGI_CHECK_MODEL or (run.agents[0]["model"] if run.agents else None)


def compare(run_a: EvaluationRun, run_b: EvaluationRun) -> dict[str, Any]:
    """Two runs of the same suite side by side, with the cases whose verdicts differ
    between them (panel A against B, or before and after a change of criteria)."""
    if run_a.suite_id != run_b.suite_id:
        raise InvalidInput({"run": ["Only runs of the same suite can be compared."]})
    sides = {}
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
    return {"suite": run_a.suite.name, **sides, "changed_cases": changed}


def case_verdicts(records: list[metrics.Record]) -> dict[str, list[str]]:
    """Case id -> the sorted verdicts of its decided judgements."""
    verdicts: dict[str, list[str]] = {}
    for record in records:
        if record.verdict is not None:
            verdicts.setdefault(record.case_id, []).append(record.verdict)
    return {case_id: sorted(found) for case_id, found in verdicts.items()}
