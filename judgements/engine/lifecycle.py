"""A judgement's life: one function per move of its state graph (models/judgements.py
`JudgementStates`, declared beside the model); the rows the engine writes while it runs
one are engine/writes.py's. Synchronous ORM code; the engine awaits it through `db_call`
(judgements/infrastructure/database.py).

    idle ──claim──▶ judging ──finish──▶ approved | rejected
                     │ ▲ │
                     │ │ └── store_decision / store_check (each vote and check as it
                     │ │     arrives, with the attempt that made it; lease holder only)
                     │ └──── claim again (lease expired, time not up): resume
                     └────── fail (a call failed) / expire (time up) ──▶ error
    idle | judging ──cancel_run (its evaluation run cancelled)──▶ error
    judging ──finish as escalate (a verdict its level does not keep)──▶ approved | rejected

Each moves the judgement through the one transition function (models/states.py): one
conditional UPDATE from the move's sources, so two workers (or a worker and the sweeper)
can never both move the same judgement: the loser's UPDATE matches no row. Each is
logged at INFO with the worker, the round and how long the judgement had been running,
so a judgement's life can be read from the logs.

A verdict its level does not keep, on a panel that escalates, is decided by the
`escalate` move instead of `finish` (same states, the level marked `escalated`): the
story's next level starts in the same transaction (intake/start.py `escalate`), and that
level's verdict is in force instead (docs/escalation.md).

Each publishes its own live event (judging started, finished, failed) once its
transaction commits, so no caller can forget it or announce what was rolled back. The
lease itself (taken, renewed, given up) is models/leases.py's, kept renewed by
engine/lease.py; every write made while judging checks, under a row lock, that the
writer still holds it.
"""

import logging
from datetime import datetime

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import models, transaction
from django.db.models import Case, Count, F, When
from django.db.models.functions import Coalesce
from django.utils import timezone

from judgements.audit import receipts
from judgements.audit import record as chain_record
from judgements.core import rules
from judgements.engine.lease import LeaseLost
from judgements.infrastructure.database import db_call
from judgements.infrastructure.events import Event, publish_on_commit
from judgements.intake import escalation, start
from judgements.models.agents import Agent, RoundDecision
from judgements.models.choices import Status
from judgements.models.evaluations import EvaluationRun
from judgements.models.judgements import Judgement, JudgementQuerySet
from judgements.models.judgements import JudgementStates as States
from judgements.models.leases import RELEASED
from judgements.models.magi_settings import magi_settings
from judgements.models.states import Told, transition
from judgements.outcome import marks, webhooks
from judgements.panels import escalation_chain

log = logging.getLogger(__name__)


def round_of(judgement_id: int) -> int:
    """The round the judgement is in, from its stored decisions."""
    stored = (
        RoundDecision.objects.filter(agent__judgement_id=judgement_id)
        .values("agent")
        .annotate(votes=Count("pk"))
        .values_list("votes", flat=True)
    )
    counts = list(stored)
    # Agents with no decision yet have no row here.
    counts += [0] * (rules.PANEL_SIZE - len(counts))
    return rules.round_under_way(counts)


def told(
    judgement_id: int, source: str, started_at: datetime | None, round_number: int | None = None
) -> Told:
    """What the log says of a judgement moved: the round (read from the stored decisions
    unless the caller knows it: a query saved on every finish) and how long it has run."""
    running = (timezone.now() - started_at).total_seconds() if started_at else 0.0
    number = round_of(judgement_id) if round_number is None else round_number
    return Told(
        f"judgement {judgement_id}", source, f" in round {number}, {running:.1f} s after its start"
    )


def claim(worker_id: str, candidates: JudgementQuerySet, limit: int) -> list[int]:
    """idle, or judging with an expired lease -> judging, leased to `worker_id`; oldest
    first, at most `limit`. Returns the ids now held. The lease's own claim
    (models/leases.py LeaseQuerySet.claim: rows other workers locked are skipped, the
    UPDATE re-checks claimability), moving the state beside it."""
    now = timezone.now()
    with transaction.atomic():
        rows = (
            candidates.claimable(now)
            .filter(status__in=States.claim.sources)
            .claim(
                worker_id,
                limit,
                order=("created_at", "pk"),
                columns=("pk", "status", "started_at"),
                now=now,
                move=States.claim,
                told=lambda row: told(row[0], row[1], row[2] or now),
                started_at=Coalesce("started_at", now),
                # Claimed while judging: its last worker's lease ran out.
                takeovers=F("takeovers") + Case(When(status=Status.JUDGING, then=1), default=0),
            )
        )
        for pk, _, _ in rows:
            publish_on_commit(pk, Event.JUDGING_STARTED)
    return [pk for pk, _, _ in rows]


def finish(judgement_id: int, worker_id: str, votes: dict[Agent, list[str]]) -> Status:
    """judging, held by `worker_id` -> approved or rejected: each agent's final score and
    decision, the panel's verdict by the rule (judgements/core/rules.py) and what is stored
    beside it (outcome/marks.py: the mark, the signals, the confidences), with the
    webhook, all in one transaction. LeaseLost if the judgement is not ours any more."""
    judgement = Judgement.objects.held_by(worker_id).filter(pk=judgement_id)
    finals = []
    with transaction.atomic():
        for agent, agent_votes in votes.items():
            agent.final_score_tenths = rules.score_tenths(agent_votes)
            agent.final_decision = rules.final_vote(agent_votes).value
            finals.append(agent.final_decision)
        Agent.objects.bulk_update(votes, ["final_score_tenths", "final_decision"])
        verdict = rules.panel_decision(finals)
        status = Status.APPROVED if verdict is rules.Vote.APPROVE else Status.REJECTED
        # The mark goes beside the verdict, in the same transaction, so the webhook
        # stored here already carries it (and "held" where the case asked for that); one
        # reading of the judgement for the mark, the verdict's log entry and its receipt.
        record = receipts.loaded(judgement_id)
        # A level of an escalation story (docs/escalation.md), or one that may start it.
        in_story = record.root_id is not None or (
            record.panel is not None and record.panel.escalate_to_id is not None
        )
        # Read against its story's cascade certificate when one is in force for its level.
        cascade = escalation_chain.cascade_in_force(record) if in_story else None
        fields = marks.outcome_fields(record, verdict.value, cascade)
        # A verdict its level does not keep goes to the story's next level (started in
        # this transaction: a level that did not keep its verdict never decides a story).
        outcome = escalation.Outcome(fields["trust"], fields["contested"])
        following = escalation.next_level(record, outcome) if in_story else None
        decided = {
            "finished_at": timezone.now(),
            "escalated": following is not None,
            **RELEASED,
            **fields,
        }
        updated = transition(
            judgement,
            States.finish if following is None else States.escalate,
            status,
            worker=worker_id,
            told=[told(judgement_id, Status.JUDGING, record.started_at, rules.ROUNDS)],
            **decided,
        )
        if not updated:
            raise LeaseLost(f"judgement {judgement_id} is no longer held by {worker_id}")
        # The verdict into the audit log and its receipt signed, before the webhook that
        # carries the receipt: from the one reading above with the fields just written.
        record.status = status
        for name, value in decided.items():
            setattr(record, name, value)
        chain_record.verdict(record)
        publish_on_commit(judgement_id, Event.FINISHED, status=status.value)
        go_on(record, following)
    return status


def go_on(record: Judgement, following: escalation.NextLevel | None) -> None:
    """After a level is decided, in its transaction: the story's next level started when
    its verdict is not kept (docs/escalation.md), else the story's end told."""
    if following is None:
        story_ended(record.pk, record.root_id, webhooks.FINISHED)
        return
    started = start.escalate(following)
    log.info(
        "judgement %s: escalated to level %s (panel %s) as judgement %s",
        record.pk,
        started.level,
        following.panel.pk,
        started.pk,
    )


def fail(
    judgement_id: int,
    message: str,
    *,
    worker_id: str,
    agent_id: int | None = None,
    round_number: int | None = None,
) -> bool:
    """judging, held by `worker_id` -> error, with the cause. Decisions already stored
    stay. False if the judgement already ended or another worker holds it."""
    judgement = Judgement.objects.held_by(worker_id).filter(pk=judgement_id)
    started_at = judgement.values_list("started_at", flat=True).first()
    with transaction.atomic():
        updated = transition(
            judgement,
            States.fail,
            Status.ERROR,
            worker=worker_id,
            told=[told(judgement_id, Status.JUDGING, started_at)],
            error_message=message,
            error_agent_id=agent_id,
            error_round=round_number,
            finished_at=timezone.now(),
            **RELEASED,
        )
        if updated:
            publish_on_commit(judgement_id, Event.FAILED, message=message)
            story_ended(judgement_id, root_of(judgement_id), webhooks.FAILED)
    return bool(updated)


def root_of(judgement_id: int) -> int | None:
    return Judgement.objects.filter(pk=judgement_id).values_list("root_id", flat=True).first()


def story_ended(judgement_id: int, root_id: int | None, event: str) -> None:
    """The level that ends its story (decided and kept, past the last level, or failed):
    the story's webhook (the root's callback, carrying every level), and a live event on
    every earlier level's page, whose verdict in force is this one's."""
    webhooks.enqueue(root_id or judgement_id, event)
    if root_id is None:
        return
    earlier = Judgement.objects.filter(models.Q(pk=root_id) | models.Q(root_id=root_id))
    for pk in earlier.exclude(pk=judgement_id).values_list("pk", flat=True):
        publish_on_commit(pk, Event.FINISHED)


def timeout_message(round_number: int) -> str:
    return (
        f"Judgement did not finish within {magi_settings.MAGI_JUDGEMENT_TIMEOUT:g} s of its start "
        f"(given up in round {round_number})"
    )


def expire_overdue(worker_id: str, limit: int = 100) -> list[tuple[int, str]]:
    """judging, nobody holding it, past its deadline -> error. Returns (id, message) pairs.

    A judgement whose workers keep dying (or that is resumed only after its deadline)
    cannot be finished in time; it must not stay "judging" forever.
    """
    now = timezone.now()
    expired = []
    with transaction.atomic():
        overdue = list(
            Judgement.objects.overdue(now)
            .filter(status__in=States.expire.sources)
            .select_for_update(skip_locked=True)
            .values_list("pk", "lease_owner", "started_at")[:limit]
        )
        for judgement_id, owner, started_at in overdue:
            round_number = round_of(judgement_id)
            cause = f"worker {owner} stopped renewing its lease" if owner else "no worker held it"
            message = f"{timeout_message(round_number)}: {cause}"
            transition(
                Judgement.objects.filter(pk=judgement_id),
                States.expire,
                Status.ERROR,
                worker=worker_id,
                told=[told(judgement_id, Status.JUDGING, started_at, round_number)],
                error_message=message,
                error_round=round_number,
                finished_at=now,
                **RELEASED,
            )
            publish_on_commit(judgement_id, Event.FAILED, message=message)
            story_ended(judgement_id, root_of(judgement_id), webhooks.FAILED)
            expired.append((judgement_id, message))
    return expired


def cancel_run(run: EvaluationRun, user: AbstractBaseUser) -> list[int]:
    """An evaluation run's unfinished judgements (idle, or judging on any worker) ->
    error, naming who cancelled; the run records it. Returns the ids ended. A worker
    running one stops its calls at its next lease renewal (HeldLease.keep), and what
    was decided stays in the record. A run already cancelled or done changes nothing."""
    now = timezone.now()
    message = f"Cancelled: evaluation run {run.pk} was cancelled by {user.get_username()}"
    with transaction.atomic():
        rows = list(
            run.judgements.filter(status__in=States.cancel.sources)
            .select_for_update(skip_locked=True)
            .values_list("pk", "status", "started_at")
        )
        if not rows:
            return []
        EvaluationRun.objects.filter(pk=run.pk, cancelled_at__isnull=True).update(
            cancelled_at=now, cancelled_by=user
        )
        transition(
            Judgement.objects.filter(pk__in=[pk for pk, _, _ in rows]),
            States.cancel,
            Status.ERROR,
            worker=f"cancel by {user.get_username()}",
            told=[told(pk, source, started_at) for pk, source, started_at in rows],
            error_message=message,
            finished_at=now,
            **RELEASED,
        )
        for pk, _, _ in rows:
            publish_on_commit(pk, Event.FAILED)
        # No webhooks: a run's judgements are made without a callback_url.
    return [pk for pk, _, _ in rows]


# Awaitable forms for the engine's event loop, named as Django names its async ORM calls.
aclaim = db_call(claim)
afinish = db_call(finish)
afail = db_call(fail)
aexpire_overdue = db_call(expire_overdue)
