"""Appending to the audit chain: one entry after another, each holding the SHA-256 of the
one before (magi_client/canonical.py says over which bytes), serialised by a lock on the
chain's one head row so that any number of workers on PostgreSQL make one chain, never a
fork. SQLite's IMMEDIATE transactions serialise writes anyway.

An append runs inside the caller's transaction: the change and its entry are stored
together, or neither. It only reads the rows it describes; it never changes them.

The chain starts with a genesis entry, made by the first append on a database: it names
the highest judgement id made before it (`judgements_before`), so that `manage.py audit
verify` knows which judgements came before the chain and have no entries.
"""

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from judgements.audit import keys
from judgements.models import ChainEntry, ChainHead, ChainSignature, EntryKind, Judgement
from magi_client.canonical import GENESIS_PREV, canonical, entry_sha256, timestamp
from magi_client.receipts import HEAD_FORMAT

HEAD_ID = 1


def start() -> None:
    """Make the chain's head and genesis entry if this database has none yet. Called
    before a judgement's rows are stored, so the genesis counts only those made before."""
    if not ChainHead.objects.filter(pk=HEAD_ID).exists():
        with transaction.atomic():
            locked_head()


def locked_head() -> ChainHead:
    """The head row, locked until the caller's transaction ends; made with the genesis
    entry if missing. Two transactions making it at once: the second waits for the
    first's insert, fails it, and locks the row the first made."""
    head = ChainHead.objects.select_for_update().filter(pk=HEAD_ID).first()
    if head is not None:
        return head
    try:
        with transaction.atomic():
            head = ChainHead.objects.create(pk=HEAD_ID, seq=0, sha256="")
            before = Judgement.objects.aggregate(last=Max("pk"))["last"] or 0
            write(head, EntryKind.GENESIS, "chain", {"judgements_before": before}, None)
            return head
    except IntegrityError:
        return ChainHead.objects.select_for_update().get(pk=HEAD_ID)


def next_entry(
    head: ChainHead,
    kind: str,
    subject: str,
    payload: dict[str, Any],
    judgement_id: int | None = None,
) -> ChainEntry:
    """The entry after `head`, unsaved; `head` moves to it in memory (save_head stores
    that)."""
    at = timezone.now()
    seq, prev = head.seq + 1, head.sha256 or GENESIS_PREV
    body = {
        "seq": seq,
        "kind": str(kind),
        "subject": subject,
        "at": timestamp(at),
        "payload": payload,
        "prev_sha256": prev,
    }
    digest = entry_sha256(body)
    head.seq, head.sha256 = seq, digest
    return ChainEntry(
        seq=seq,
        kind=kind,
        subject=subject,
        judgement_id=judgement_id,
        at=at,
        payload=canonical(payload).decode("utf-8"),
        prev_sha256=prev,
        sha256=digest,
    )


def save_head(head: ChainHead) -> None:
    ChainHead.objects.filter(pk=HEAD_ID).update(seq=head.seq, sha256=head.sha256)


def write(
    head: ChainHead, kind: str, subject: str, payload: dict[str, Any], judgement_id: int | None
) -> ChainEntry:
    entry = next_entry(head, kind, subject, payload, judgement_id)
    entry.save(force_insert=True)
    save_head(head)
    return entry


def append(
    kind: str, subject: str, payload: dict[str, Any], judgement_id: int | None = None
) -> ChainEntry:
    """Add one entry at the chain's end, in the caller's transaction."""
    with transaction.atomic():
        return write(locked_head(), kind, subject, payload, judgement_id)


def head_body(seq: int, sha256: str) -> dict[str, Any]:
    """What a head signature signs."""
    return {"format": HEAD_FORMAT, "seq": seq, "sha256": sha256}


def sign_head(entry: ChainEntry) -> ChainSignature:
    """Sign the chain's head, `entry` (just appended, its lock still held): made on every
    verdict and review, so that rewriting the chain up to here needs the signing key."""
    signed = keys.sign(head_body(entry.seq, entry.sha256))
    return ChainSignature.objects.create(
        seq=entry.seq, sha256=entry.sha256, kid=signed["kid"], signature=signed["value"]
    )
