"""What each kind of log entry says, read from the rows it describes: the one definition
used both when an entry is appended (audit/record.py) and when `manage.py audit verify`
reads the rows again and compares (audit/row_checks.py). Only facts that stay true of an
unchanged history: texts are named by their SHA-256, people by their id, a model call
(every prompt and reply) by the SHA-256 of its fields as the evidence pack shows them.
"""

from typing import TypedDict

from judgements.core.json_values import JsonValue
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


def subject_of(judgement_id: int) -> str:
    return f"judgement {judgement_id}"


class Call(TypedDict):
    """A model call as its entry hashes it (call_sha256) and the evidence pack shows it."""

    attempt: int
    model: str
    provider: str
    base_url: str
    request: JsonValue
    response_text: str
    error: str
    duration_ms: int
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None
    started_at: str


def call_of(row: LLMAttempt | JudgementCheck) -> Call:
    """A model call as stored and as the evidence pack shows it: every prompt and reply."""
    return {
        "attempt": row.attempt,
        "model": row.model,
        "provider": row.provider,
        "base_url": row.base_url,
        "request": row.request,
        "response_text": row.response_text,
        "error": row.error,
        "duration_ms": row.duration_ms,
        "prompt_tokens": row.prompt_tokens,
        "completion_tokens": row.completion_tokens,
        "cached_tokens": row.cached_tokens,
        "started_at": timestamp(row.started_at),
    }


class AttemptCall(Call):
    """An agent's call with its round and outcome (those keys first, as written)."""

    round: int
    outcome: str


def attempt_call(row: LLMAttempt) -> AttemptCall:
    """An agent's attempt as the pack shows it: its round and outcome, then the call."""
    return {"round": row.round, "outcome": row.outcome, **call_of(row)}


def asked_to_hold(judgement: Judgement) -> bool:
    """Whether its verdict was held for a person when decided (Judgement.is_held, before
    any review released it)."""
    return bool(
        (judgement.contested and judgement.hold_contested)
        or (judgement.trust == Trust.UNMEASURED and judgement.hold_unmeasured)
    )


class AgentFact(TypedDict):
    """An agent as submitted: its criteria named by their SHA-256."""

    position: int
    name: str
    model: str
    criteria_sha256: str


def agent_fact(agent: Agent) -> AgentFact:
    return {
        "position": agent.position,
        "name": agent.name,
        "model": agent.model,
        "criteria_sha256": text_sha256(agent.criteria),
    }


class Escalates(TypedDict):
    """Which story a later level continues (docs/escalation.md): its level, the level it
    continues and the story's first judgement."""

    level: int
    judgement: int | None
    root: int | None


class Submitted(TypedDict):
    """A `submitted` entry's payload (`escalates`: None but for a story's later level)."""

    judgement: int
    created_at: str
    title_sha256: str
    content_sha256: str
    agents: list[AgentFact]
    escalates: Escalates | None


def submitted(judgement: Judgement) -> Submitted:
    """A judgement as submitted: what was judged, by which agents, and, for a story's
    later level, which level it continues: so that a story's evidence pack links its
    levels by what the log holds (magi_client/packs.py), not by what the pack says."""
    return {
        "judgement": judgement.pk,
        "created_at": timestamp(judgement.created_at),
        "title_sha256": text_sha256(judgement.title),
        "content_sha256": text_sha256(judgement.content),
        "agents": [agent_fact(agent) for agent in judgement.agents.all()],
        "escalates": None
        if judgement.level == 1 and judgement.escalated_from_id is None
        else {
            "level": judgement.level,
            "judgement": judgement.escalated_from_id,
            "root": judgement.root_id,
        },
    }


class DecisionFact(TypedDict):
    """A `decision` entry's payload."""

    judgement: int
    agent: int
    round: int
    decision: str
    reason_sha256: str
    missing: list[JsonValue]
    p_approve: float | None
    attempt_sha256: str | None


def decision(row: RoundDecision, agent: Agent, attempt: LLMAttempt | None) -> DecisionFact:
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


class AttemptFact(TypedDict):
    """An `attempt` entry's payload."""

    judgement: int
    agent: int
    round: int
    outcome: str
    call_sha256: str


def attempt(row: LLMAttempt, agent: Agent) -> AttemptFact:
    """A call of an agent's that made no decision (failed, or asked again after a check)."""
    return {
        "judgement": agent.judgement_id,
        "agent": agent.position,
        "round": row.round,
        "outcome": row.outcome,
        "call_sha256": call_sha256(attempt_call(row)),
    }


class CheckFact(TypedDict):
    """A `check` entry's payload."""

    judgement: int
    kind: str
    agent: int | None
    decision: str | None
    p_approve: float | None
    steered: bool | None
    call_sha256: str


def check(row: JudgementCheck, position: int | None) -> CheckFact:
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


class Score(TypedDict):
    """An agent's final score in tenths and its decision (None until decided)."""

    agent: int
    score_tenths: int | None
    decision: str | None


class VerdictFact(TypedDict):
    """A `verdict` entry's payload."""

    judgement: int
    status: str
    finished_at: str | None
    scores: list[Score]
    contested: bool | None
    contest_reasons: list[JsonValue]
    trust: str | None
    certificate: int | None
    held: bool
    escalated: bool


def verdict(judgement: Judgement) -> VerdictFact:
    """The panel's verdict with each agent's score, the mark and the certificate it was
    read against, whether it was held for a person, and whether it `escalated`: the level
    did not keep it, and the story's next level decides instead."""
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
        "escalated": judgement.escalated,
    }


# What the entries written before issue 70 did not say (every later one says it): an
# entry without it is compared on the rest (audit/row_checks.py).
STORY_KEYS = ("escalates", "escalated")


class OverrideFact(TypedDict):
    """An `override` entry's payload (`released`: the verdict was held for a person)."""

    judgement: int
    by: int | None
    at: str
    panel_status: str
    decision: str
    reason_sha256: str
    released: bool


def override(row: Override, judgement: Judgement) -> OverrideFact:
    return {
        "judgement": row.judgement_id,
        "by": row.by_id,
        "at": timestamp(row.at),
        "panel_status": row.panel_status,
        "decision": row.decision,
        "reason_sha256": text_sha256(row.reason),
        "released": asked_to_hold(judgement),
    }


class ConfirmationFact(TypedDict):
    """A `confirmation` entry's payload."""

    judgement: int
    by: int | None
    at: str
    panel_status: str
    reason_sha256: str
    released: bool


def confirmation(row: Confirmation, judgement: Judgement) -> ConfirmationFact:
    return {
        "judgement": row.judgement_id,
        "by": row.by_id,
        "at": timestamp(row.at),
        "panel_status": row.panel_status,
        "reason_sha256": text_sha256(row.reason),
        "released": asked_to_hold(judgement),
    }


class CertificateFact(TypedDict):
    """A `certificate` entry's payload."""

    certificate: int
    panel: int | None
    created_at: str
    fingerprint: str
    certified: bool
    target: float
    delta: float
    samples: int
    rule: JsonValue
    bound: float | None


def certificate(row: Certificate) -> CertificateFact:
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


class CertificateVoided(TypedDict):
    """A `certificate_voided` entry's payload."""

    certificate: int
    panel: int | None
    voided_at: str | None
    void_reason: str


def certificate_voided(row: Certificate) -> CertificateVoided:
    return {
        "certificate": row.pk,
        "panel": row.panel_id,
        "voided_at": None if row.voided_at is None else timestamp(row.voided_at),
        "void_reason": row.void_reason,
    }


class ConfigurationFact(TypedDict):
    """A `configuration` entry's payload: the audit row as written."""

    audit_entry: int
    subject: str
    target: str
    by: int | None
    actor: str
    at: str
    before: JsonValue
    after: JsonValue


def configuration(row: AuditEntry) -> ConfigurationFact:
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
