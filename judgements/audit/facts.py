"""What each kind of log entry says, read from the rows it describes: the one definition
used both when an entry is appended (audit/record.py) and when `manage.py audit verify`
reads the rows again and compares (audit/row_checks.py). Only facts that stay true of an
unchanged history: texts are named by their SHA-256, people by their id, a model call
(every prompt and reply) by the SHA-256 of its fields as the evidence pack shows them.
"""

from typing import Any

from django.db.models import Max, Model

from judgements.models import (
    Agent,
    AuditEntry,
    Certificate,
    Confirmation,
    Judgement,
    JudgementCheck,
    LLMAttempt,
    Override,
    RoundDecision,
    Trust,
)
from magi_client.canonical import call_sha256, text_sha256, timestamp

CALL_FIELDS = (
    "attempt", "model", "provider", "base_url", "request", "response_text", "error",
    "duration_ms", "prompt_tokens", "completion_tokens", "cached_tokens",
)  # fmt: skip
# The rows `audit verify` looks for an entry of, by id: those after the genesis's.
LOOKED_FOR: dict[str, type[Model]] = {
    "override": Override,
    "confirmation": Confirmation,
    "certificate": Certificate,
    "audit_entry": AuditEntry,
    "attempt": LLMAttempt,
    "check": JudgementCheck,
}


def subject_of(judgement_id: int) -> str:
    return f"judgement {judgement_id}"


def genesis() -> dict[str, Any]:
    """The log's first entry: the last row of each kind made before it, by id."""
    last = Judgement.objects.aggregate(last=Max("pk"))["last"] or 0
    before = {
        name: model._default_manager.aggregate(last=Max("pk"))["last"] or 0
        for name, model in LOOKED_FOR.items()
    }
    return {"judgements_before": last, "before": before}


def call_of(row: LLMAttempt | JudgementCheck) -> dict[str, Any]:
    """A model call as stored and as the evidence pack shows it: every prompt and reply."""
    found: dict[str, Any] = {name: getattr(row, name) for name in CALL_FIELDS}
    return found | {"started_at": timestamp(row.started_at)}


def attempt_call(row: LLMAttempt) -> dict[str, Any]:
    """An agent's attempt as the pack shows it: its round and outcome, then the call."""
    return {"round": row.round, "outcome": row.outcome} | call_of(row)


def asked_to_hold(judgement: Judgement) -> bool:
    """Whether its verdict was held for a person when decided (Judgement.is_held, before
    any review released it)."""
    return bool(
        (judgement.contested and judgement.hold_contested)
        or (judgement.trust == Trust.UNMEASURED and judgement.hold_unmeasured)
    )


def agent_fact(agent: Agent) -> dict[str, Any]:
    return {
        "position": agent.position,
        "name": agent.name,
        "model": agent.model,
        "criteria_sha256": text_sha256(agent.criteria),
    }


def submitted(judgement: Judgement) -> dict[str, Any]:
    """A judgement as submitted: what was judged, by which agents."""
    return {
        "judgement": judgement.pk,
        "created_at": timestamp(judgement.created_at),
        "title_sha256": text_sha256(judgement.title),
        "content_sha256": text_sha256(judgement.content),
        "agents": [agent_fact(agent) for agent in judgement.agents.all()],
    }


def decision(row: RoundDecision, agent: Agent, attempt: LLMAttempt | None) -> dict[str, Any]:
    """One agent's decision in one round, with the call that made it; found again by
    (judgement, agent, round)."""
    return {
        "judgement": agent.judgement_id,
        "agent": agent.position,
        "round": row.round,
        "decision": row.decision,
        "reason_sha256": text_sha256(row.reason),
        "missing": list(row.missing),
        "p_approve": row.p_approve,
        "attempt_sha256": None if attempt is None else call_sha256(attempt_call(attempt)),
    }


def attempt(row: LLMAttempt, agent: Agent) -> dict[str, Any]:
    """A call of an agent's that made no decision (failed, or asked again after a check)."""
    return {
        "judgement": agent.judgement_id,
        "agent": agent.position,
        "round": row.round,
        "outcome": row.outcome,
        "call_sha256": call_sha256(attempt_call(row)),
    }


def check(row: JudgementCheck, position: int | None) -> dict[str, Any]:
    """A call beside the vote with what it found (nothing, when it failed)."""
    return {
        "judgement": row.judgement_id,
        "kind": row.kind,
        "agent": position,
        "decision": row.decision,
        "p_approve": row.p_approve,
        "steered": row.steered,
        "call_sha256": call_sha256(call_of(row)),
    }


def verdict(judgement: Judgement) -> dict[str, Any]:
    """The panel's verdict with each agent's score, the mark and the certificate it was
    read against, and whether it was held for a person."""
    return {
        "judgement": judgement.pk,
        "status": judgement.status,
        "finished_at": None if judgement.finished_at is None else timestamp(judgement.finished_at),
        "scores": [
            {
                "agent": agent.position,
                "score_tenths": agent.final_score_tenths,
                "decision": agent.final_decision,
            }
            for agent in judgement.agents.all()
        ],
        "contested": judgement.contested,
        "contest_reasons": list(judgement.contest_reasons),
        "trust": judgement.trust,
        "certificate": judgement.certificate_id,
        "held": asked_to_hold(judgement),
    }


def override(row: Override, judgement: Judgement) -> dict[str, Any]:
    return {
        "judgement": row.judgement_id,
        "by": row.by_id,
        "at": timestamp(row.at),
        "panel_status": row.panel_status,
        "decision": row.decision,
        "reason_sha256": text_sha256(row.reason),
        "released": asked_to_hold(judgement),
    }


def confirmation(row: Confirmation, judgement: Judgement) -> dict[str, Any]:
    return {
        "judgement": row.judgement_id,
        "by": row.by_id,
        "at": timestamp(row.at),
        "panel_status": row.panel_status,
        "reason_sha256": text_sha256(row.reason),
        "released": asked_to_hold(judgement),
    }


def certificate(row: Certificate) -> dict[str, Any]:
    return {
        "certificate": row.pk,
        "panel": row.panel_id,
        "created_at": timestamp(row.created_at),
        "fingerprint": row.fingerprint,
        "certified": row.certified,
        "target": row.target,
        "delta": row.delta,
        "samples": row.samples,
        "rule": row.rule,
        "bound": row.bound,
    }


def certificate_voided(row: Certificate) -> dict[str, Any]:
    return {
        "certificate": row.pk,
        "panel": row.panel_id,
        "voided_at": None if row.voided_at is None else timestamp(row.voided_at),
        "void_reason": row.void_reason,
    }


def configuration(row: AuditEntry) -> dict[str, Any]:
    """A change of a panel, team, reviewers, budget, suite, user or token: its audit row
    (models/teams.AuditEntry) as it was written."""
    return {
        "audit_entry": row.pk,
        "subject": row.subject,
        "target": row.target,
        "by": row.by_id,
        "actor": row.actor,
        "at": timestamp(row.at),
        "before": row.before,
        "after": row.after,
    }
