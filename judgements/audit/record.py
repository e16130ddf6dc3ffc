"""The chain entries MAGI's changes append, one function per kind of event, each called
by the one function that makes the change, inside its transaction (docs/evidence.md
lists them): a judgement submitted (intake/start.py), each decision (engine/writes.py)
and the verdict (engine/lifecycle.py), a confirmation (outcome/reviews.py), an override
(outcome/overrides.py), a certificate made (evaluations/certify.py) or voided
(configuration/saving.py), a panel, team, reviewer, budget, suite, user or token change
(configuration/teams.py's and budget_config.py's audit rows). Each only reads its rows."""

from typing import Any

from judgements.audit import chain, facts
from judgements.models import (
    Agent,
    AuditEntry,
    Certificate,
    Confirmation,
    EntryKind,
    Judgement,
    Override,
    RoundDecision,
)


def submitted(judgement_ids: list[int]) -> None:
    for judgement in Judgement.objects.filter(pk__in=judgement_ids).prefetch_related("agents"):
        chain.append(
            EntryKind.SUBMITTED,
            facts.subject_of(judgement.pk),
            facts.submitted(judgement),
            judgement.pk,
        )


def decision(row: RoundDecision, agent: Agent) -> None:
    """Described from the row as created: its fields are plain text and a list of texts,
    which the database gives back as they went in (not read again: nine a judgement)."""
    chain.append(
        EntryKind.DECISION,
        f"{facts.subject_of(agent.judgement_id)}, agent {agent.position}, round {row.round}",
        facts.decision(row, agent),
        agent.judgement_id,
    )


def verdict(judgement_id: int) -> None:
    """The panel's verdict, then the chain's head signed."""
    judgement = Judgement.objects.prefetch_related("agents").get(pk=judgement_id)
    signed(EntryKind.VERDICT, judgement_id, facts.verdict(judgement))


def override(row: Override) -> None:
    judgement = Judgement.objects.get(pk=row.judgement_id)
    stored = Override.objects.get(pk=row.pk)
    signed(EntryKind.OVERRIDE, row.judgement_id, facts.override(stored, judgement))


def confirmation(row: Confirmation) -> None:
    judgement = Judgement.objects.get(pk=row.judgement_id)
    stored = Confirmation.objects.get(pk=row.pk)
    signed(EntryKind.CONFIRMATION, row.judgement_id, facts.confirmation(stored, judgement))


def signed(kind: EntryKind, judgement_id: int, payload: dict[str, Any]) -> None:
    """An entry that puts a verdict in force, about the judgement, then the chain's head
    signed: what a receipt is read from."""
    entry = chain.append(kind, facts.subject_of(judgement_id), payload, judgement_id)
    chain.sign_head(entry)


def certificate(row: Certificate) -> None:
    stored = Certificate.objects.get(pk=row.pk)
    chain.append(EntryKind.CERTIFICATE, f"certificate {row.pk}", facts.certificate(stored))


def certificates_voided(ids: list[int]) -> None:
    for row in Certificate.objects.filter(pk__in=ids).order_by("pk"):
        chain.append(
            EntryKind.CERTIFICATE_VOIDED, f"certificate {row.pk}", facts.certificate_voided(row)
        )


def configuration(row: AuditEntry) -> None:
    # Read back: the JSON columns as stored, not the Python values given.
    stored = AuditEntry.objects.get(pk=row.pk)
    chain.append(EntryKind.CONFIGURATION, row.target[:120], facts.configuration(stored))
