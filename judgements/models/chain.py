"""The audit log's rows: its entries (each a leaf of one Merkle tree, judgements/audit/log.py
appends them, audit/sequencer.py gives them their place), the tree's stored subtrees, the
signed checkpoints, the log's state with the sequencer's lease, and the receipts signed
when a verdict is put in force. Never edited but by the sequencer's placing.

An entry's states (the sequencer moves it, audit/sequencer.py):

    queued ──its tag checks, a new leaf──▶ placed (`seq`, under a signed checkpoint)
       │
       └──its tag does not check, or a copy of a placed leaf──▶ set aside (`set_aside`:
          why), never placed or signed; `audit verify` names it

The sequencer's states, on its one LogState row (the lease every background job uses,
models/leases.py):

    free ──claim──▶ held by one worker: it places queued entries, a batch at a time,
                    and signs a checkpoint per batch, under the row's lock
      ▲                 │
      └─────release─────┘  (or expiry: a worker that died; the next claim goes on)
"""

import functools
from collections.abc import Sequence

from django.db import connections, models
from django.utils import timezone

from judgements.models.choices import ids_from_one
from judgements.models.leases import Leased, LeaseQuerySet


class EntryKind(models.TextChoices):
    GENESIS = "genesis", "Start of the log"
    SUBMITTED = "submitted", "Judgement submitted"
    ATTEMPT = "attempt", "Model call that made no decision"
    DECISION = "decision", "Agent's decision"
    CHECK = "check", "Check beside the vote"
    VERDICT = "verdict", "Panel's verdict"
    CONFIRMATION = "confirmation", "Verdict confirmed"
    OVERRIDE = "override", "Verdict overridden"
    CERTIFICATE = "certificate", "Certificate made"
    CERTIFICATE_VOIDED = "certificate_voided", "Certificate voided"
    CONFIGURATION = "configuration", "Panel, team, budget, user or token changed or deleted"


class SetAside(models.TextChoices):
    """Why the sequencer did not place a queued entry (audit/sequencer.py)."""

    UNTAGGED = "untagged", "Queued without MAGI's key"
    REPEAT = "repeat", "A copy of an entry already in the log"


# The kinds that put a verdict in force: each makes a receipt.
IN_FORCE_KINDS = (EntryKind.VERDICT, EntryKind.OVERRIDE, EntryKind.CONFIRMATION)


# The fields a writer fills (their attribute names); `seq` stays NULL (queued) until the
# sequencer places it.
QUEUED_COLUMNS = (
    "kind", "subject", "judgement_id", "at", "payload", "prev_sha256", "leaf_hash", "tag",
)  # fmt: skip


class ChainEntryQuerySet(models.QuerySet["ChainEntry"]):
    def waiting(self) -> "ChainEntryQuerySet":
        """Entries queued and still to be placed: neither placed nor set aside."""
        return self.filter(seq__isnull=True, set_aside="")

    def queue(self, rows: Sequence["ChainEntry"]) -> list["ChainEntry"]:
        """Store new entries, queued, with one INSERT ... RETURNING id written out here
        rather than bulk_create: appending is the log's hot path (every model call, every
        decision), and the ORM's machinery around the one statement cost a writer as much
        CPU as the statement itself (docs/benchmarks.md, the audit log). The rows come
        back saved, their ids in the order given (as bulk_create's)."""
        connection = connections[self.db]
        if not connection.features.can_return_rows_from_bulk_insert:
            return self.bulk_create(rows)  # an SQLite before 3.35: no RETURNING
        moment = connection.ops.adapt_datetimefield_value
        for start in range(0, len(rows), INSERT_BATCH):
            chunk = rows[start : start + INSERT_BATCH]
            params = [
                value
                for row in chunk
                for value in (
                    str(row.kind), row.subject, row.judgement_id, moment(row.at), row.payload,
                    row.prev_sha256, row.leaf_hash, row.tag,
                )
            ]  # fmt: skip
            with connection.cursor() as cursor:
                cursor.execute(insert_sql(self.db, len(chunk)), params)
                ids = [found for (found,) in cursor.fetchall()]
            for row, pk in zip(chunk, ids, strict=True):
                row.pk = pk
                row._state.adding, row._state.db = False, self.db
        return list(rows)


# Rows per INSERT: 8 parameters each, under SQLite's 32,766 and PostgreSQL's 65,535.
INSERT_BATCH = 1000


@functools.cache
def insert_sql(alias: str, rows: int) -> str:
    """The INSERT of `rows` queued entries on database `alias`, made once."""
    quote = connections[alias].ops.quote_name
    column_of = {field.attname: field.column for field in ChainEntry._meta.concrete_fields}
    columns = ", ".join(quote(column_of[name]) for name in QUEUED_COLUMNS)
    values = ", ".join(["(" + ", ".join(["%s"] * len(QUEUED_COLUMNS)) + ")"] * rows)
    return (
        f"INSERT INTO {quote(ChainEntry._meta.db_table)} ({columns}) "
        f"VALUES {values} RETURNING {quote('id')}"
    )


class ChainEntry(models.Model):
    """One entry of the log: what happened (`kind`, `subject`, the `judgement` it is
    about, `payload` as canonical JSON), when, its leaf hash, and its place in the tree
    (`seq`, from 0; None while queued for the sequencer). The leaf is the canonical JSON
    of exactly these fields (magi_client/canonical.py entry_leaf); an entry carried over
    from the hash chain before issue 55 keeps its old form and `prev_sha256`."""

    # Its leaf index, given by the sequencer; writers leave it empty (no lock, no order).
    seq = models.PositiveBigIntegerField(null=True, blank=True, unique=True)
    kind = models.CharField(max_length=24, choices=EntryKind.choices)
    # What it is about in words, as "judgement 12": the row may be gone since.
    subject = models.CharField(max_length=120)
    # The judgement it is about, if any: in the leaf too. No constraint and nothing done
    # on delete: deleting the judgement leaves its entries to show it.
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
    # Only an entry of the old hash chain: the SHA-256 of the entry before it.
    prev_sha256 = models.CharField(max_length=64, blank=True)
    # SHA-256(0x00 || leaf), lowercase hex (magi_client/merkle.py).
    leaf_hash = models.CharField(max_length=64)
    # HMAC-SHA256 of the leaf hash by the process that queued it, with a key the database
    # does not hold (core/entry_tags.py): the sequencer places only an entry whose tag
    # checks. Empty for an entry placed before tags (its checkpoint holds it). The
    # database's default is for a writer of the release before, during an upgrade.
    tag = models.CharField(max_length=64, blank=True, default="", db_default="")
    # Why the sequencer set it aside instead of placing it; empty: queued or placed.
    set_aside = models.CharField(
        max_length=16, choices=SetAside.choices, blank=True, default="", db_default=""
    )

    objects = ChainEntryQuerySet.as_manager()

    class Meta:
        constraints = [ids_from_one("chain_entry_id_from_one")]
        ordering = ["seq"]
        verbose_name_plural = "log entries"
        indexes = [
            models.Index(fields=["judgement_id", "seq"], name="chain_judgement_idx"),
            models.Index(
                fields=["id"], name="chain_queued_idx", condition=models.Q(seq__isnull=True)
            ),
            models.Index(fields=["leaf_hash"], name="chain_leaf_hash_idx"),
        ]

    def __str__(self) -> str:
        place = "queued" if self.seq is None else str(self.seq)
        return f"{place}: {self.get_kind_display()} ({self.subject})"


class LogStateQuerySet(LeaseQuerySet["LogState"]):
    pass


class LogState(Leased):
    """The one row (pk 1): the tree the sequencer has built (its size and root hash), the
    log's name (`origin`, in every checkpoint), and the sequencer's lease."""

    size = models.PositiveBigIntegerField(default=0)
    root_hash = models.CharField(max_length=64, blank=True)
    origin = models.CharField(max_length=200)

    objects = LogStateQuerySet.as_manager()

    def __str__(self) -> str:
        return f"log {self.origin} at size {self.size}"


class LogNode(models.Model):
    """A complete subtree of the log's tree, stored once made: 2**level leaves from
    index * 2**level, keyed by index * 64 + level. Proofs are read from these."""

    key = models.BigIntegerField(primary_key=True)
    hash = models.CharField(max_length=64)

    def __str__(self) -> str:
        return f"node {self.key % 64}/{self.key // 64}"


class Checkpoint(models.Model):
    """The tree at one size, signed (a C2SP signed note, magi_client/checkpoints.py): one
    per batch the sequencer places. `published`: copied where the database's writer cannot
    rewrite it (the append-only directory, the webhook subscribers)."""

    size = models.PositiveBigIntegerField(unique=True)
    root_hash = models.CharField(max_length=64)
    note = models.TextField()
    made_at = models.DateTimeField(default=timezone.now)
    published = models.BooleanField(default=False)

    class Meta:
        constraints = [ids_from_one("checkpoint_id_from_one")]
        ordering = ["size"]
        indexes = [
            models.Index(
                fields=["size"],
                name="checkpoint_unpublished_idx",
                condition=models.Q(published=False),
            )
        ]

    def __str__(self) -> str:
        return f"checkpoint at size {self.size}"


class Receipt(models.Model):
    """A verdict's receipt, made and signed once when the verdict, an override or a
    confirmation is put in force, in its transaction, and served as stored: `body` is the
    canonical JSON signed, byte for byte (judgements/audit/receipts.py)."""

    judgement = models.ForeignKey(
        "judgements.Judgement",
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="receipts",
    )
    # The entry that put the verdict in force, which the body names by its leaf hash.
    entry = models.ForeignKey(
        ChainEntry, on_delete=models.DO_NOTHING, db_constraint=False, related_name="receipts"
    )
    event = models.CharField(max_length=24, choices=EntryKind.choices)
    body = models.TextField()
    kid = models.CharField(max_length=64)
    signature = models.CharField(max_length=100)
    made_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [ids_from_one("receipt_id_from_one")]
        ordering = ["judgement_id", "id"]
        indexes = [models.Index(fields=["judgement_id", "id"], name="receipt_judgement_idx")]

    def __str__(self) -> str:
        return f"receipt of judgement {self.judgement_id} ({self.event})"
