"""The audit chain's rows: each entry of one append-only, hash-chained log of what matters
for the history (judgements/audit/chain.py appends, audit/verification.py checks), the
head that serialises appends, and the signatures of the head. Never edited."""

from django.db import models
from django.utils import timezone


class EntryKind(models.TextChoices):
    GENESIS = "genesis", "Start of the chain"
    SUBMITTED = "submitted", "Judgement submitted"
    DECISION = "decision", "Agent's decision"
    VERDICT = "verdict", "Panel's verdict"
    CONFIRMATION = "confirmation", "Verdict confirmed"
    OVERRIDE = "override", "Verdict overridden"
    CERTIFICATE = "certificate", "Certificate made"
    CERTIFICATE_VOIDED = "certificate_voided", "Certificate voided"
    CONFIGURATION = "configuration", "Panel, team, reviewer or budget change"


# The kinds that put a verdict in force: a receipt names the latest of them.
IN_FORCE_KINDS = (EntryKind.VERDICT, EntryKind.OVERRIDE, EntryKind.CONFIRMATION)


class ChainEntry(models.Model):
    """One entry: its place (`seq`, from 1, no gaps), what happened (`kind`, `subject`,
    `payload` as canonical JSON), when, and the SHA-256 of the one before and of itself
    (magi_client/canonical.py says over which bytes)."""

    seq = models.PositiveBigIntegerField(unique=True)
    kind = models.CharField(max_length=24, choices=EntryKind.choices)
    # What it is about in words, as "judgement 12": the row may be gone since.
    subject = models.CharField(max_length=120)
    # The judgement it is about, if any. No constraint and nothing done on delete: deleting
    # the judgement leaves its entries to show it (a key only so answers can prefetch).
    judgement = models.ForeignKey(
        "judgements.Judgement",
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        related_name="chain_entries",
    )
    at = models.DateTimeField(default=timezone.now)
    # Canonical JSON (RFC 8785) as text, byte for byte as hashed: a JSON column would
    # reorder it on PostgreSQL.
    payload = models.TextField()
    prev_sha256 = models.CharField(max_length=64)
    sha256 = models.CharField(max_length=64)

    class Meta:
        ordering = ["seq"]
        verbose_name_plural = "chain entries"
        indexes = [models.Index(fields=["judgement_id", "seq"], name="chain_judgement_idx")]

    def __str__(self) -> str:
        return f"{self.seq}: {self.get_kind_display()} ({self.subject})"


class ChainHead(models.Model):
    """The one row (pk 1) every append locks: the last entry's place and hash."""

    seq = models.PositiveBigIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True)

    def __str__(self) -> str:
        return f"head at {self.seq}"


class ChainSignature(models.Model):
    """The chain's head at `seq` signed with Ed25519 by key `kid` (judgements/audit/keys.py):
    made on every verdict and review, so rewriting the chain before it needs the key."""

    seq = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    kid = models.CharField(max_length=64)
    signature = models.CharField(max_length=100)
    signed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["seq"]
        indexes = [models.Index(fields=["seq"], name="chain_signature_seq_idx")]

    def __str__(self) -> str:
        return f"signature of {self.seq} by {self.kid}"
