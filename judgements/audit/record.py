"""The log entries MAGI's changes append, one function per kind of event, each called by
the one function that makes the change, inside its transaction (docs/evidence.md lists
them): a judgement submitted (intake/start.py); each model call, decision and check
(engine/writes.py) and the verdict (engine/lifecycle.py); a confirmation
(outcome/reviews.py), an override (outcome/overrides.py); a certificate made
(evaluations/certify.py) or voided (configuration/saving.py); a panel, team, reviewer,
budget, suite, user or token changed or deleted (configuration/teams.py's and
budget_config.py's audit rows). Each only reads its rows. An entry that puts a verdict
in force is followed by its receipt, signed once (audit/receipts.py).

What each entry says is read from its rows by the `*_fact` functions below, in the shapes
audit/facts.py names: the one description used both when an entry is appended and when
`manage.py audit verify` reads the rows again and compares (audit/row_checks.py).
"""

from judgements.audit import facts, log, receipts
from judgements.models import (
    Agent,
    AuditEntry,
    Certificate,
    Confirmation,
    EntryKind,
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


# --- what each entry says, read from its rows ----------------------------------------


def call_of(row: LLMAttempt | JudgementCheck) -> facts.Call:
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


def attempt_call(row: LLMAttempt) -> facts.AttemptCall:
    """An agent's attempt as the pack shows it: its round and outcome, then the call."""
    return {"round": row.round, "outcome": row.outcome, **call_of(row)}


def asked_to_hold(judgement: Judgement) -> bool:
    """Whether its verdict was held for a person when decided (Judgement.is_held, before
    any review released it)."""
    return bool(
        (judgement.contested and judgement.hold_contested)
        or (judgement.trust == Trust.UNMEASURED and judgement.hold_unmeasured)
    )


def agent_fact(agent: Agent) -> facts.AgentFact:
    return {
        "position": agent.position,
        "name": agent.name,
        "model": agent.model,
        "criteria_sha256": text_sha256(agent.criteria),
    }


def submitted_fact(judgement: Judgement) -> facts.Submitted:
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


def decision_fact(
    row: RoundDecision, agent: Agent, attempt: LLMAttempt | None
) -> facts.DecisionFact:
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


def attempt_fact(row: LLMAttempt, agent: Agent) -> facts.AttemptFact:
    """A call of an agent's that made no decision (failed, or asked again after a check)."""
    return {
        "judgement": agent.judgement_id,
        "agent": agent.position,
        "round": row.round,
        "outcome": row.outcome,
        "call_sha256": call_sha256(attempt_call(row)),
    }


def check_fact(row: JudgementCheck, position: int | None) -> facts.CheckFact:
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


def verdict_fact(judgement: Judgement) -> facts.VerdictFact:
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


def override_fact(row: Override, judgement: Judgement) -> facts.OverrideFact:
    return {
        "judgement": row.judgement_id,
        "by": row.by_id,
        "at": timestamp(row.at),
        "panel_status": row.panel_status,
        "decision": row.decision,
        "reason_sha256": text_sha256(row.reason),
        "released": asked_to_hold(judgement),
    }


def confirmation_fact(row: Confirmation, judgement: Judgement) -> facts.ConfirmationFact:
    return {
        "judgement": row.judgement_id,
        "by": row.by_id,
        "at": timestamp(row.at),
        "panel_status": row.panel_status,
        "reason_sha256": text_sha256(row.reason),
        "released": asked_to_hold(judgement),
    }


def certificate_fact(row: Certificate) -> facts.CertificateFact:
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


def certificate_voided_fact(row: Certificate) -> facts.CertificateVoided:
    return {
        "certificate": row.pk,
        "panel": row.panel_id,
        "voided_at": None if row.voided_at is None else timestamp(row.voided_at),
        "void_reason": row.void_reason,
    }


def configuration_fact(row: AuditEntry) -> facts.ConfigurationFact:
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


# --- the entries, appended ------------------------------------------------------


def submitted(judgement_ids: list[int]) -> None:
    found = Judgement.objects.filter(pk__in=judgement_ids).prefetch_related("agents")
    log.append_many(
        [log.Entry(EntryKind.SUBMITTED, subject_of(j.pk), submitted_fact(j), j.pk) for j in found]
    )


def decision(row: RoundDecision, agent: Agent, attempt: LLMAttempt) -> None:
    """Described from the rows as created, the call that made it included: their fields
    are plain text and JSON, which the database gives back as they went in (not read
    again: nine a judgement)."""
    log.append(
        EntryKind.DECISION,
        f"{subject_of(agent.judgement_id)}, agent {agent.position}, round {row.round}",
        decision_fact(row, agent, attempt),
        agent.judgement_id,
    )


def attempt(row: LLMAttempt, agent: Agent) -> None:
    """A call that made no decision: failed, or a valid answer a check found wanting."""
    log.append(
        EntryKind.ATTEMPT,
        f"{subject_of(agent.judgement_id)}, agent {agent.position}, round {row.round}",
        attempt_fact(row, agent),
        agent.judgement_id,
    )


def check(row: JudgementCheck, agent: Agent | None) -> None:
    position = None if agent is None else agent.position
    log.append(
        EntryKind.CHECK,
        f"{subject_of(row.judgement_id)}, {row.kind} check",
        check_fact(row, position),
        row.judgement_id,
    )


def verdict(judgement: Judgement) -> None:
    """The panel's verdict, then its receipt, from the judgement as `receipts.loaded` read
    it in the transaction that decides it, with the fields that decided it set
    (engine/lifecycle.py finish): one reading for both, and no reading back."""
    in_force(EntryKind.VERDICT, judgement, verdict_fact(judgement))


def override(row: Override) -> None:
    judgement = receipts.loaded(row.judgement_id)
    stored = Override.objects.get(pk=row.pk)
    in_force(EntryKind.OVERRIDE, judgement, override_fact(stored, judgement))


def confirmation(row: Confirmation) -> None:
    judgement = receipts.loaded(row.judgement_id)
    stored = Confirmation.objects.get(pk=row.pk)
    in_force(EntryKind.CONFIRMATION, judgement, confirmation_fact(stored, judgement))


def in_force(kind: EntryKind, judgement: Judgement, payload: log.Payload) -> None:
    """An entry that puts a verdict in force, then its receipt, signed and stored once,
    from the same reading of the judgement (receipts.loaded)."""
    entry = log.append(kind, subject_of(judgement.pk), payload, judgement.pk)
    receipts.make(entry, judgement)


def certificate(row: Certificate) -> None:
    stored = Certificate.objects.get(pk=row.pk)
    log.append(EntryKind.CERTIFICATE, f"certificate {row.pk}", certificate_fact(stored))


def certificates_voided(ids: list[int]) -> None:
    log.append_many(
        [
            log.Entry(
                EntryKind.CERTIFICATE_VOIDED, f"certificate {row.pk}", certificate_voided_fact(row)
            )
            for row in Certificate.objects.filter(pk__in=ids).order_by("pk")
        ]
    )


def configuration(row: AuditEntry) -> None:
    # Read back: the JSON columns as stored, not the Python values given.
    stored = AuditEntry.objects.get(pk=row.pk)
    log.append(EntryKind.CONFIGURATION, row.target, configuration_fact(stored))
