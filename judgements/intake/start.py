"""The one way a judgement starts: from the page, the API (with or without an
Idempotency-Key), `manage.py judge` and evaluation runs alike.

`start` checks the limits, stores the judgements with their agents, records an
idempotency key with them, and wakes the engine once the transaction commits (a caller's
outer transaction that rolls back wakes nobody, and the woken worker finds the rows).
"""

from collections.abc import Sequence
from dataclasses import dataclass

from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from judgements.infrastructure import events
from judgements.intake import idempotency, limits
from judgements.models import Agent, ApiToken, EvaluationRun, IdempotencyKey, Judgement


@dataclass(frozen=True)
class Submission:
    """Who starts judgements, and how. `creator` None is the operator's command line (no
    limits); `run` an evaluation run, limited as a run when it was created
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


def start_judgement(case: dict, by: Submission) -> Started:
    """Start one judgement from a validated case; limits.Refused over a limit,
    idempotency.KeyReused for a key used before with another body."""
    return start([case], by)


def start(cases: Sequence[dict], by: Submission) -> Started:
    """Start a judgement per validated case, in one transaction; see start_judgement."""
    if by.key is None and by.run is None and by.creator is not None:
        # A cheap unlocked look first: a burst of refused requests must not queue on the
        # lock below. (A retry with a key gets its judgement back even over a limit.)
        limits.check(by.creator, by.api_token)
    digest = idempotency.body_hash(by.body) if by.key is not None else ""
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


def store(cases: Sequence[dict], by: Submission) -> list[Judgement]:
    """The judgements and their agents, in two bulk inserts: a 500-case evaluation run
    must not cost thousands of round trips."""
    created = Judgement.objects.bulk_create(
        Judgement.from_case(case, by.creator, api_token=by.api_token, run=by.run) for case in cases
    )
    Agent.objects.bulk_create(
        row
        for judgement, case in zip(created, cases, strict=True)
        for row in Agent.rows_for(judgement.pk, case["agents"])
    )
    return created


def replayed(stored: IdempotencyKey, digest: str, key: str) -> Started:
    if stored.body_hash != digest:
        raise idempotency.KeyReused(key)
    return Started([stored.judgement], stored.status_code, replayed=True)


def wake_engine(judgements: list[Judgement], by: Submission) -> None:
    """A person's judgement: wake a worker for it. A run's: wake one to claim a batch
    within the share runs may use (llm/call_slots.py); the others' sweeps find the rest."""
    async_to_sync(events.wake)(judgements[0].pk if by.run is None else None)
