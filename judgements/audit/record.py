"""The log entries MAGI's changes append, one function per kind of event, each called by
the one function that makes the change, inside its transaction (docs/evidence.md lists
them): a judgement submitted (intake/start.py); each model call, decision and check
(engine/writes.py) and the verdict (engine/lifecycle.py); a confirmation
(outcome/reviews.py), an override (outcome/overrides.py); a certificate made
(evaluations/certify.py) or voided (configuration/saving.py); a panel, team, reviewer,
budget, suite, user or token changed or deleted (configuration/teams.py's and
budget_config.py's audit rows). Each only reads its rows. An entry that puts a verdict
in force is followed by its receipt, signed once (audit/receipts.py)."""

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
)


def submitted(judgement_ids: list[int]) -> None:
    found = Judgement.objects.filter(pk__in=judgement_ids).prefetch_related("agents")
    log.append_many(
        [
            log.Entry(EntryKind.SUBMITTED, facts.subject_of(j.pk), facts.submitted(j), j.pk)
            for j in found
        ]
    )


def decision(row: RoundDecision, agent: Agent, attempt: LLMAttempt) -> None:
    """Described from the rows as created, the call that made it included: their fields
    are plain text and JSON, which the database gives back as they went in (not read
    again: nine a judgement)."""
    log.append(
        EntryKind.DECISION,
        f"{facts.subject_of(agent.judgement_id)}, agent {agent.position}, round {row.round}",
        facts.decision(row, agent, attempt),
        agent.judgement_id,
    )


def attempt(row: LLMAttempt, agent: Agent) -> None:
    """A call that made no decision: failed, or a valid answer a check found wanting."""
    log.append(
        EntryKind.ATTEMPT,
        f"{facts.subject_of(agent.judgement_id)}, agent {agent.position}, round {row.round}",
        facts.attempt(row, agent),
        agent.judgement_id,
    )


def check(row: JudgementCheck, agent: Agent | None) -> None:
    position = None if agent is None else agent.position
    log.append(
        EntryKind.CHECK,
        f"{facts.subject_of(row.judgement_id)}, {row.kind} check",
        facts.check(row, position),
        row.judgement_id,
    )


def judgement_read(judgement_id: int) -> Judgement:
    """The judgement with everything its verdict's entry and receipt read, in a fixed
    number of queries (receipts.loaded)."""
    return receipts.loaded(judgement_id)


def verdict(judgement: Judgement) -> None:
    """The panel's verdict, then its receipt, from the judgement as `judgement_read` read
    it in the transaction that decides it, with the fields that decided it set
    (engine/lifecycle.py finish): one reading for both, and no reading back."""
    in_force(EntryKind.VERDICT, judgement, facts.verdict(judgement))


def override(row: Override) -> None:
    judgement = receipts.loaded(row.judgement_id)
    stored = Override.objects.get(pk=row.pk)
    in_force(EntryKind.OVERRIDE, judgement, facts.override(stored, judgement))


def confirmation(row: Confirmation) -> None:
    judgement = receipts.loaded(row.judgement_id)
    stored = Confirmation.objects.get(pk=row.pk)
    in_force(EntryKind.CONFIRMATION, judgement, facts.confirmation(stored, judgement))


def in_force(kind: EntryKind, judgement: Judgement, payload: log.Payload) -> None:
    """An entry that puts a verdict in force, then its receipt, signed and stored once,
    from the same reading of the judgement (receipts.loaded)."""
    entry = log.append(kind, facts.subject_of(judgement.pk), payload, judgement.pk)
    receipts.make(entry, judgement)


def certificate(row: Certificate) -> None:
    stored = Certificate.objects.get(pk=row.pk)
    log.append(EntryKind.CERTIFICATE, f"certificate {row.pk}", facts.certificate(stored))


def certificates_voided(ids: list[int]) -> None:
    log.append_many(
        [
            log.Entry(
                EntryKind.CERTIFICATE_VOIDED, f"certificate {row.pk}", facts.certificate_voided(row)
            )
            for row in Certificate.objects.filter(pk__in=ids).order_by("pk")
        ]
    )


def configuration(row: AuditEntry) -> None:
    # Read back: the JSON columns as stored, not the Python values given.
    stored = AuditEntry.objects.get(pk=row.pk)
    log.append(EntryKind.CONFIGURATION, row.target, facts.configuration(stored))
