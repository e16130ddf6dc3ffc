"""Evaluation runs: a panel over a suite, each case `repeats` times, as ordinary queued
judgements linked to the run; starting one, following its progress, cancelling it.

The run stores nothing of its own beyond what it was asked to do: its judgements run on
the same engine as any other (and survive restarts the same way), and the report is
computed from them whenever it is asked for (judgements/evaluations/run_reports.py).
"""

import csv
import io
import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TypedDict

from django.contrib.auth.models import User
from django.db import models, transaction
from django.utils import timezone

from judgements.core import prompt_variants, rules, text
from judgements.core.csv_cells import spreadsheet_safe, yes_no
from judgements.core.errors import InvalidInput
from judgements.engine import lifecycle
from judgements.evaluations import answers, run_reports
from judgements.intake import rows, schemas, start
from judgements.intake.case import Case, CaseAgent
from judgements.intake.schemas import NAME_MAX_CHARS, TITLE_MAX_CHARS
from judgements.models import (
    FINISHED_STATUSES,
    ApiToken,
    EvaluationRun,
    Panel,
    RoundDecision,
    Status,
    Suite,
    SuiteCase,
)
from judgements.panels import variant_setting

MAX_REPEATS = 20


# --- starting ---------------------------------------------------------------------------


def start_run(
    *,
    panel: Panel | None,
    agents: Sequence[Mapping[str, object]],
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

    `plain_call`: ask, beside each case, the plain calls of the model: one told the three
    criteria and the rule (the second opinion's) and one on each criterion, so the report
    shows the panel and its agents against them; on unless turned off. `variants`: the
    prompt variants its judgements run (judgements/core/prompt_variants.py); None: the
    saved panel's, or the site's default (panels/variant_setting.py variants_for); []: none.

    `agents` are the three agents as they will run (a panel's, or typed ones), validated
    like a judgement's: errors name "agents[1].model", "repeat" or "panel_name".
    """
    cases = list(suite.cases.order_by("position"))
    chosen, clean_agents = checked_run(panel, agents, panel_name, cases, repeats, variants)
    with transaction.atomic():
        run = EvaluationRun.objects.create(
            panel=panel,
            panel_name=panel_name.strip(),
            agents=[agent.stored() for agent in clean_agents],
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
                run_case(run, case, repeat, clean_agents)
                for repeat in range(1, run.repeats + 1)
                for case in cases
            ],
            start.Submission(creator=creator, run=run),
        )
    return run


def checked_run(
    panel: Panel | None,
    agents: Sequence[Mapping[str, object]],
    panel_name: str,
    cases: list[SuiteCase],
    repeats: int,
    variants: list[str] | None,
) -> tuple[list[prompt_variants.Variant], tuple[CaseAgent, ...]]:
    """start_run's input checked, every error at once (but a suite with no cases): the
    prompt variants chosen and the agents as they will run. InvalidInput otherwise."""
    errors: dict[str, list[str]] = {}
    if isinstance(repeats, bool) or not isinstance(repeats, int) or not 1 <= repeats <= MAX_REPEATS:
        errors["repeat"] = [f"Must be a whole number from 1 to {MAX_REPEATS}."]
    chosen: list[prompt_variants.Variant] = []
    try:
        named = variant_setting.variants_for(panel) if variants is None else variants
        chosen = sorted(prompt_variants.parse(named))
    except ValueError as exc:
        errors["variants"] = [str(exc)[0].upper() + str(exc)[1:] + "."]
    except InvalidInput as exc:
        errors.update(exc.errors)
    if not isinstance(panel_name, str) or not panel_name.strip():
        errors["panel_name"] = ["The panel needs a name."]
    elif text.char_count(panel_name.strip()) > NAME_MAX_CHARS:
        errors["panel_name"] = [f"Ensure the name has at most {NAME_MAX_CHARS} characters."]
    if not cases:
        raise InvalidInput({"suite": ["The suite holds no cases."]})
    clean_agents = checked_agents(agents, cases[0], errors)
    if errors:
        raise InvalidInput(errors)
    return chosen, clean_agents


def checked_agents(
    agents: Sequence[Mapping[str, object]], first: SuiteCase, errors: dict[str, list[str]]
) -> tuple[CaseAgent, ...]:
    """The agents checked inside a real case, so "agents[1].model" reads as it does for a
    judgement; the content is the suite's first (it passed these rules when the suite was
    imported). Their errors go into `errors`."""
    try:
        probe = {"title": "evaluation", "content": first.content, "agents": agents}
        checked = schemas.validated(schemas.CaseJson, probe)
        return tuple(agent.case_agent() for agent in checked.agents or ())
    except InvalidInput as exc:
        agent_errors = {f: m for f, m in exc.errors.items() if f.startswith("agents")}
        errors.update(agent_errors)
        if len(agent_errors) < len(exc.errors):
            # The content no longer passes (MAGI_CONTENT_MAX_CHARS lowered since).
            other = [" ".join(m) for f, m in exc.errors.items() if f not in agent_errors]
            errors["suite"] = [f"Its first case is no longer valid: {' '.join(other)}"]
        return ()


def run_case(
    run: EvaluationRun, case: SuiteCase, repeat: int, agents: tuple[CaseAgent, ...]
) -> Case:
    """A suite case as one judgement of the run. Runs measure a panel: they never hold
    a contested verdict for a person."""
    return Case(
        title=title_of(run.suite.name, case),
        content=case.content,
        agents=agents,
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


class RoundProgress(TypedDict):
    round: int
    votes: int
    of: int


class Progress(TypedDict):
    """How far a run is (`progress`): what the API answers (answers.Progress validates
    it), the run page shows and `manage.py evaluate` prints as it goes."""

    total: int
    finished: int
    errors: int
    running: int
    done: bool
    rounds: list[RoundProgress]
    seconds_left: int | None


def progress(run: EvaluationRun) -> Progress:
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
    rounds: list[RoundProgress] = [
        {"round": n, "votes": per_round.get(n, 0), "of": votes_each}
        for n in range(1, rules.ROUNDS + 1)
    ]
    done = counts["finished"] == counts["total"]
    return {
        "total": counts["total"],
        "finished": counts["finished"],
        "errors": counts["errors"],
        "running": counts["running"],
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
    return answers.EvaluationRun.from_record(
        run, state, run_reports.report(run) if state["done"] else None
    )


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
