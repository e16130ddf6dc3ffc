"""The one way a judgement starts: `submit`, for the page, the API, the MCP tools,
`manage.py judge` and evaluation runs alike (async callers reach it through db_call,
after a creation slot: `submit_from_loop`).

An entry point only translates: its input into a typed case (intake/case.py `Case`) and
a Submission, and what `submit` raises into its own answer (core.errors.Refused: 429;
idempotency.KeyReused and InvalidInput: 422, or 400 for a case that breaks its schema).
A case comes validated by the one validator of its kind where it comes in: JSON by its
pydantic face (intake/schemas.py `CaseJson`: the API's body as ninja parses it, an MCP
tool's arguments and the command line's file by `schemas.validated`), the page's by its
forms, a run's by the run; `submit` takes the `Case`s, and takes the same checks in the
same order for every one of them:

1. limits: a cheap unlocked count (limits.check; an evaluation run's, limits.check_runs).
   Not for a retry with an Idempotency-Key (it gets its judgement back even over a
   limit), nor for the operator's command line (no creator).
2. idempotency: a key stored before answers with the judgement it started (the same
   body) or idempotency.KeyReused (another body), and nothing more is checked.
3. panel resolution: a saved panel the case names, by id or name, looked up for the
   creator and its agents checked again, and the callback URL checked
   (intake/json_cases.py). The prompt variants the judgement runs are the caller's own
   when it names them (an evaluation run's), else the saved panel's setting, else the
   site's default (panels/variant_setting.py variants_for).
   3b. escalation: every level the saved panel may escalate to, checked for the team's
   access and cycles (panels/escalation_chain.py levels_after: InvalidInput naming `panel`).
4. budgets: the spending limits of the user, the team and the panel (and of every
   level's panel) must cover the estimate of every judgement started, each as if every
   level ran (spending/budgets.py: budgets.BudgetExceeded, a core.errors.Refused the API
   answers 402).

Then, in one transaction under a lock on the user's row, 2 and 1 again (a request that
went first may have stored the key or filled the limit), the judgements with their agents
and the key are stored, and the engine is woken once the transaction commits (a caller's
outer transaction that rolls back wakes nobody, and the woken worker finds the rows).

A story's later levels come in through `escalate` (engine/lifecycle.py `finish`, in the
transaction deciding the level before): admitted whole at submit, nothing is checked again.
"""

from collections.abc import Sequence
from dataclasses import dataclass, replace

from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from judgements.audit import log as audit_log
from judgements.audit import record as chain_record
from judgements.infrastructure import events
from judgements.infrastructure.database import db_call
from judgements.intake import escalation, idempotency, json_cases, limits, rows
from judgements.intake.case import Case
from judgements.intake.creation_gate import creation_slot
from judgements.models.access import ApiToken, IdempotencyKey
from judgements.models.agents import Agent
from judgements.models.evaluations import EvaluationRun
from judgements.models.judgements import Judgement
from judgements.panels import escalation_chain, variant_setting
from judgements.spending import budgets


@dataclass(frozen=True)
class Submission:
    """Who starts judgements, and how. `creator` None is the operator's command line (no
    limits, every saved panel); `run` an evaluation run, limited as a run
    (limits.check_runs), not judgement by judgement; `key` an Idempotency-Key, with the
    parsed `body` it stands for."""

    creator: User | None = None
    api_token: ApiToken | None = None
    key: str | None = None
    body: object = None
    run: EvaluationRun | None = None

    def __post_init__(self) -> None:
        if self.key is not None and self.creator is None:
            raise ValueError(
                "An Idempotency-Key is a user's: a Submission with one needs a creator."
            )


@dataclass(frozen=True)
class Started:
    judgements: list[Judgement]
    status_code: int = 201
    replayed: bool = False

    @property
    def judgement(self) -> Judgement:
        return self.judgements[0]


def submit(cases: Sequence[Case], by: Submission) -> Started:
    """Start a judgement per case, in one transaction, after the checks in the module's
    order. A case that names a saved panel gets its agents once the panel is looked up
    (step 3). Raises core.errors.Refused, idempotency.KeyReused or InvalidInput."""
    # 1. A cheap unlocked look first: a burst of refused requests must not queue on the
    # lock, nor pay for looking panels up.
    if by.run is not None:
        limits.check_runs(by.creator)
    elif by.key is None and by.creator is not None:
        limits.check(by.creator, by.api_token)
    digest = idempotency.body_hash(by.body) if by.key is not None else ""
    # 2. A retry answers with its judgement without looking its panel up again.
    if by.key is not None:
        stored = idempotency.live_key(by.creator, by.key)
        if stored is not None:
            return replayed(stored, digest, by.key)
    # 3.
    ready = [with_variants(json_cases.resolve_case(case, by.creator)) for case in cases]
    # 3b. Every level a case's panel may escalate to (panels/escalation_chain.py), checked for
    # access; an evaluation run measures its panel alone and never escalates.
    chains = {} if by.run is not None else {c.panel.pk: escalation_chain.levels_after(c.panel)
                                            for c in ready if c.panel is not None}  # fmt: skip
    # 4.
    team = rows.team_for(ready[0].panel if ready else None, by.api_token, by.run)
    first = ready[0] if ready else None
    panel, models = (first.panel, first.models()) if first else (None, [])
    later = chains.get(panel.pk, []) if panel is not None else []
    team_id = None if team is None else team.pk
    budgets.check(panel, models, len(ready), by.creator, team_id, later)
    return store_and_wake(ready, by, digest)


async def submit_from_loop(cases: Sequence[Case], by: Submission) -> Started:
    """`submit` for a request served on the event loop (the API's, the MCP tools'): in a
    creation slot (intake/creation_gate.py), through db_call."""
    async with creation_slot():
        return await db_call(submit, for_request=True)(cases, by)


def with_variants(case: Case) -> Case:
    """The case with the prompt variants its judgement runs: those its caller named (an
    evaluation run's, () included), else its saved panel's (the site's default when the
    panel sets none or there is no panel)."""
    if case.prompt_variants is not None:
        return case
    chosen = variant_setting.variants_for(case.panel)
    return replace(case, prompt_variants=tuple(sorted(str(variant) for variant in chosen)))


def store_and_wake(cases: list[Case], by: Submission, digest: str) -> Started:
    """The judgements stored under the user's lock, the key and the limits checked again
    there, and the engine woken once they are committed."""
    try:
        with transaction.atomic():
            if by.creator is not None:
                # One user's starts go one at a time: the count below and the insert are
                # one step, and a key stored by a request that went first is seen.
                get_user_model().objects.select_for_update().filter(pk=by.creator.pk).first()
            if by.key is not None:
                stored = idempotency.live_key(by.creator, by.key)
                if stored is not None:
                    return replayed(stored, digest, by.key)
                idempotency.forget_expired(by.creator)
            if by.run is None and by.creator is not None:
                limits.check(by.creator, by.api_token)
            judgements = store(cases, by)
            if by.key is not None and by.creator is not None:
                IdempotencyKey.objects.create(
                    user=by.creator,
                    key=by.key,
                    body_hash=digest,
                    judgement=judgements[0],
                    status_code=201,
                )
            transaction.on_commit(lambda: wake_engine(judgements, by))
            return Started(judgements)
    except IntegrityError:
        # A concurrent request stored the key first (a database without row locks): the
        # judgement above was rolled back with the key; answer with the winner's.
        if by.key is None:
            raise
        stored = idempotency.live_key(by.creator, by.key)
        if stored is None:
            raise
        return replayed(stored, digest, by.key)


def escalate(following: escalation.NextLevel) -> Judgement:
    """The story's narrow way in beside `submit`: the next level of a judgement whose
    verdict its level did not keep (intake/escalation.py next_level), stored in the
    transaction that decides that level (engine/lifecycle.py `finish`) and woken once it
    commits. No limit, key or budget is checked again: the story was admitted whole at
    submit, with every level's access and estimate (steps 3b and 4)."""
    level = following.level_of
    by = Submission(creator=level.creator, api_token=level.api_token)
    [started] = store([with_variants(following.case)], by, escalates=level)
    transaction.on_commit(lambda: wake_engine([started], by))
    return started


def store(
    cases: Sequence[Case], by: Submission, escalates: Judgement | None = None
) -> list[Judgement]:
    """The judgements and their agents, in two bulk inserts: a 500-case evaluation run
    must not cost thousands of round trips. Each is appended to the audit log.
    `escalates`: the level these continue (one case: the story's next level)."""
    # Before the rows: a log started now counts only the judgements made before it.
    audit_log.start()
    made = [
        rows.judgement_row(case, by.creator, api_token=by.api_token, run=by.run) for case in cases
    ]
    if escalates is not None:
        for row in made:
            row.level = escalates.level + 1
            row.escalated_from = escalates
            row.root_id = escalates.root_id or escalates.pk
            # The story's team throughout: its budgets and its people.
            row.team_id = escalates.team_id
    if by.run is None:
        # A level under its cascade's certificate asks the checks that level's rule reads.
        first = escalates.root.panel if escalates and escalates.root else None
        for row, case in zip(made, cases, strict=True):
            start = case.panel if escalates is None else (first or escalates.panel)
            asked = escalation.checks_asked(case, start, row.level)
            if asked is not None:
                row.checks_asked = asked
    created = Judgement.objects.bulk_create(made)
    Agent.objects.bulk_create(
        row
        for judgement, case in zip(created, cases, strict=True)
        for row in rows.agent_rows(judgement.pk, case.agents)
    )
    chain_record.submitted([judgement.pk for judgement in created])
    return created


def replayed(stored: IdempotencyKey, digest: str, key: str) -> Started:
    if stored.body_hash != digest:
        raise idempotency.KeyReused(key)
    return Started([stored.judgement], stored.status_code, replayed=True)


def wake_engine(judgements: list[Judgement], by: Submission) -> None:
    """A person's judgement: wake a worker for it. A run's: wake one to claim a batch
    within the share runs may use (llm/call_slots.py); the others' sweeps find the rest."""
    async_to_sync(events.wake)(judgements[0].pk if by.run is None else None)
