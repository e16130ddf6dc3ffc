"""What the engine reads and writes about one judgement: its agents and the votes so far,
every LLM attempt, each decision the moment it arrives, and the final scores.

Synchronous ORM code behind `db_call`, so the engine awaits it from its event loop.
"""

from typing import Any

from django.db import IntegrityError, transaction

from judgements.core import rules
from judgements.engine import transitions
from judgements.engine.lease import LeaseLost
from judgements.engine.state import Deliberation
from judgements.infrastructure.database import db_call
from judgements.llm import calls
from judgements.models import (
    Agent,
    AttemptOutcome,
    Judgement,
    JudgementCheck,
    LLMAttempt,
    RoundDecision,
    Status,
)


@db_call
def load(judgement_id: int) -> Deliberation:
    judgement = Judgement.objects.get(pk=judgement_id)
    agents = list(judgement.agents.order_by("position"))
    votes = {(d.agent_id, d.round): d for d in RoundDecision.objects.filter(agent__in=agents)}
    done: set[tuple[str, int | None]] = set()
    if judgement.checks_asked:
        done = set(
            JudgementCheck.objects.filter(judgement=judgement, error="").values_list(
                "kind", "agent_id"
            )
        )
    return Deliberation(judgement, agents, votes, done)


def audit_fields(route: calls.ModelRoute, entry: calls.AttemptRecord) -> dict[str, Any]:
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
    agent: Agent, round_number: int, route: calls.ModelRoute, entry: calls.AttemptRecord
) -> LLMAttempt:
    outcome = AttemptOutcome.OK if entry.ok else AttemptOutcome.FAILED
    return LLMAttempt(
        agent=agent, round=round_number, outcome=outcome, **audit_fields(route, entry)
    )


@db_call
def store_failed_attempt(
    agent: Agent, round_number: int, route: calls.ModelRoute, entry: calls.AttemptRecord
) -> None:
    attempt_row(agent, round_number, route, entry).save()


@db_call
def store_rechecked_attempt(
    agent: Agent, round_number: int, route: calls.ModelRoute, entry: calls.AttemptRecord
) -> None:
    """A valid answer a check found wanting: kept for the audit, never a vote."""
    row = attempt_row(agent, round_number, route, entry)
    row.outcome = AttemptOutcome.RECHECKED
    row.save()


@db_call
def store_decision(
    agent: Agent,
    round_number: int,
    route: calls.ModelRoute,
    result: calls.VerdictResult,
    worker_id: str,
) -> RoundDecision:
    """The decision and the attempt that produced it, in one transaction, by the lease
    holder only."""
    with transaction.atomic():
        # A worker that lost its lease stops here. While the row is locked a concurrent
        # claim skips it, so the check holds until we commit.
        held = Judgement.objects.held_by(worker_id).filter(pk=agent.judgement_id)
        if not held.select_for_update().exists():
            raise LeaseLost(f"judgement {agent.judgement_id} is no longer held by {worker_id}")
        attempt_row(agent, round_number, route, result.attempt).save()
        try:
            with transaction.atomic():
                return RoundDecision.objects.create(
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
        except IntegrityError:
            # Already decided by an earlier holder of the lease: the stored one stands.
            return RoundDecision.objects.get(agent=agent, round=round_number)


def check_row(
    judgement_id: int,
    kind: str,
    agent: Agent | None,
    route: calls.ModelRoute,
    entry: calls.AttemptRecord,
) -> JudgementCheck:
    return JudgementCheck(
        judgement_id=judgement_id, kind=kind, agent=agent, **audit_fields(route, entry)
    )


@db_call
def store_failed_check(
    judgement_id: int,
    kind: str,
    agent: Agent | None,
    route: calls.ModelRoute,
    entry: calls.AttemptRecord,
) -> None:
    check_row(judgement_id, kind, agent, route, entry).save()


@db_call
def store_check(
    judgement_id: int,
    kind: str,
    agent: Agent | None,
    route: calls.ModelRoute,
    entry: calls.AttemptRecord,
    worker_id: str,
    **finding,
) -> None:
    """A check's successful call with what it found (p_approve, decision, steered), by
    the lease holder only."""
    with transaction.atomic():
        held = Judgement.objects.held_by(worker_id).filter(pk=judgement_id)
        if not held.select_for_update().exists():
            raise LeaseLost(f"judgement {judgement_id} is no longer held by {worker_id}")
        row = check_row(judgement_id, kind, agent, route, entry)
        for name, value in finding.items():
            setattr(row, name, value)
        row.save()


@db_call
def store_outcome(deliberation: Deliberation, worker_id: str) -> Status:
    """Each agent's final score and decision, and the panel's, written together or not at
    all."""
    finals = []
    with transaction.atomic():
        for agent in deliberation.agents:
            votes = deliberation.agent_votes(agent)
            agent.final_score_tenths = rules.score_tenths(votes)
            agent.final_decision = rules.final_vote(votes).value
            agent.save(update_fields=["final_score_tenths", "final_decision"])
            finals.append(agent.final_decision)
        approved = rules.panel_decision(finals) is rules.Vote.APPROVE
        status = Status.APPROVED if approved else Status.REJECTED
        # The mark goes beside the verdict, in the same transaction, so the webhook the
        # finish stores already carries it (and "held" where the case asked for that).
        judgement = Judgement.objects.prefetch_related("agents__decisions").get(
            pk=deliberation.judgement.pk
        )
        verdict = rules.panel_decision(finals).value
        outcome = judgement.outcome_fields(verdict)
        if not transitions.finish(deliberation.judgement.pk, worker_id, status, outcome):
            raise LeaseLost(
                f"judgement {deliberation.judgement.pk} is no longer held by {worker_id}"
            )
    return status
