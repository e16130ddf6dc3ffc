"""Every row the engine writes while it runs a judgement, as it happens: each attempt of
a call (a vote's or a check's), each decision with the attempt that made it, each check
with what it found. A decision and a check are stored only while the writer holds the
judgement's lease (checked under a row lock); the changes of state are
engine/lifecycle.py's. Synchronous ORM code, awaited through `db_call`.
"""

import functools
from collections.abc import Mapping
from datetime import datetime
from typing import TypedDict

from django.db import IntegrityError, connections, router, transaction

from judgements.audit import record as chain_record
from judgements.engine.lease import LeaseLost
from judgements.infrastructure.database import db_call
from judgements.llm import calls, completions
from judgements.models.agents import Agent, AttemptOutcome, LLMAttempt, RoundDecision
from judgements.models.checks import JudgementCheck
from judgements.models.judgements import Judgement


class AuditFields(TypedDict):
    """The columns LLMAttempt and JudgementCheck share: one audited call."""

    attempt: int
    model: str
    provider: str
    base_url: str
    request: Mapping[str, object]
    response_text: str
    error: str
    duration_ms: int
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None
    started_at: datetime


def audit_fields(route: completions.ModelRoute, entry: calls.AttemptRecord) -> AuditFields:
    """What every audited call stores, a vote's attempt or a check: where it went, what
    was sent and answered, how long it took and what it cost."""
    return {
        "attempt": entry.attempt,
        "model": route.model,
        "provider": route.provider,
        "base_url": entry.base_url,
        "request": entry.request,
        "response_text": entry.response_text,
        "error": entry.error,
        "duration_ms": entry.duration_ms,
        "prompt_tokens": entry.prompt_tokens,
        "completion_tokens": entry.completion_tokens,
        "cached_tokens": entry.cached_tokens,
        "started_at": entry.started_at,
    }


def attempt_row(
    agent: Agent, round_number: int, route: completions.ModelRoute, entry: calls.AttemptRecord
) -> LLMAttempt:
    outcome = AttemptOutcome.OK if entry.ok else AttemptOutcome.FAILED
    return LLMAttempt(
        agent=agent, round=round_number, outcome=outcome, **audit_fields(route, entry)
    )


# Stand-ins the lease check is compiled with, once per database, then swapped for each
# call's values: the ORM compiled the same statement for every decision and check, about
# 4 % of the engine's CPU (docs/benchmarks.md, the engine's CPU per decision).
_WORKER, _JUDGEMENT = "\x00worker", -7
# What the statement's parameters are: the worker and status (text), the pk and EXISTS's 1.
Param = str | int


@functools.cache
def held_statement(alias: str, vendor: str) -> tuple[str, tuple[Param, ...]]:
    """`Judgement.objects.held_by(worker).filter(pk=...).select_for_update().exists()`
    as the ORM compiles it for this database (kept per alias and its vendor), with the
    stand-ins among its parameters.
    Compiled inside the caller's transaction (select_for_update wants one)."""
    held = Judgement.objects.held_by(_WORKER).filter(pk=_JUDGEMENT).select_for_update()
    sql, params = held.query.exists().get_compiler(alias).as_sql()
    return sql, tuple(params)


def locked_if_held(judgement_id: int, worker_id: str) -> bool:
    """Whether `worker_id` holds the judgement while it judges, its row locked until the
    transaction ends (a concurrent claim skips it): the ORM's query, compiled once."""
    alias = router.db_for_write(Judgement)
    sql, template = held_statement(alias, connections[alias].vendor)
    stand_ins: dict[Param, Param] = {_WORKER: worker_id, _JUDGEMENT: judgement_id}
    params = [stand_ins.get(value, value) for value in template]
    with connections[alias].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone() is not None


def store_failed_attempt(
    agent: Agent, round_number: int, route: completions.ModelRoute, entry: calls.AttemptRecord
) -> None:
    with transaction.atomic():
        row = attempt_row(agent, round_number, route, entry)
        row.save()
        chain_record.attempt(row, agent)


def store_rechecked_attempt(
    agent: Agent, round_number: int, route: completions.ModelRoute, entry: calls.AttemptRecord
) -> None:
    """A valid answer a check found wanting: kept for the audit, never a vote."""
    row = attempt_row(agent, round_number, route, entry)
    row.outcome = AttemptOutcome.RECHECKED
    with transaction.atomic():
        row.save()
        chain_record.attempt(row, agent)


def store_decision(
    agent: Agent,
    round_number: int,
    route: completions.ModelRoute,
    result: calls.VerdictResult,
    worker_id: str,
) -> RoundDecision:
    """The decision and the attempt that produced it, in one transaction, by the lease
    holder only."""
    with transaction.atomic():
        # A worker that lost its lease stops here. While the row is locked a concurrent
        # claim skips it, so the check holds until we commit.
        if not locked_if_held(agent.judgement_id, worker_id):
            raise LeaseLost(f"judgement {agent.judgement_id} is no longer held by {worker_id}")
        made = attempt_row(agent, round_number, route, result.attempt)
        made.save()
        try:
            with transaction.atomic():
                stored = RoundDecision.objects.create(
                    agent=agent,
                    round=round_number,
                    decision=result.verdict.decision,
                    reason=result.verdict.reason,
                    missing=list(result.verdict.missing),
                    latency_ms=result.latency_ms,
                    prompt_tokens=result.prompt_tokens,
                    completion_tokens=result.completion_tokens,
                    cached_tokens=result.attempt.cached_tokens,
                    p_approve=result.p_approve,
                )
                chain_record.decision(stored, agent, made)
                return stored
        except IntegrityError:
            # Already decided by an earlier holder of the lease: the stored one stands,
            # and this call is logged as one that made no decision.
            chain_record.attempt(made, agent)
            return RoundDecision.objects.get(agent=agent, round=round_number)


def check_row(
    judgement_id: int,
    kind: str,
    agent: Agent | None,
    route: completions.ModelRoute,
    entry: calls.AttemptRecord,
) -> JudgementCheck:
    return JudgementCheck(
        judgement_id=judgement_id, kind=kind, agent=agent, **audit_fields(route, entry)
    )


def store_failed_check(
    judgement_id: int,
    kind: str,
    agent: Agent | None,
    route: completions.ModelRoute,
    entry: calls.AttemptRecord,
) -> None:
    with transaction.atomic():
        row = check_row(judgement_id, kind, agent, route, entry)
        row.save()
        chain_record.check(row, agent)


def store_check(
    judgement_id: int,
    kind: str,
    agent: Agent | None,
    route: completions.ModelRoute,
    entry: calls.AttemptRecord,
    worker_id: str,
    **finding: object,
) -> None:
    """A check's successful call with what it found (p_approve, decision, steered), by
    the lease holder only."""
    with transaction.atomic():
        if not locked_if_held(judgement_id, worker_id):
            raise LeaseLost(f"judgement {judgement_id} is no longer held by {worker_id}")
        row = check_row(judgement_id, kind, agent, route, entry)
        for name, value in finding.items():
            setattr(row, name, value)
        row.save()
        chain_record.check(row, agent)


# Awaitable forms for the engine's event loop, named as Django names its async ORM calls.
astore_failed_attempt = db_call(store_failed_attempt)
astore_rechecked_attempt = db_call(store_rechecked_attempt)
astore_decision = db_call(store_decision)
astore_failed_check = db_call(store_failed_check)
astore_check = db_call(store_check)
