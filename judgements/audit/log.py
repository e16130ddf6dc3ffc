"""Appending to the audit log: an entry is a row written inside the caller's transaction,
with its leaf hash, and nothing else: no lock, no head, no order among writers (as
Trillian's and Rekor's writers queue leaves). The sequencer (audit/sequencer.py) later
gives queued entries their places in the Merkle tree, in batches, and signs a checkpoint.

The change and its entry are stored together, or neither. An append only reads the rows
it describes; it never changes them.

The log starts with its state row and a genesis entry, made once (the first submission or
the sequencer's first run, whichever comes first): the genesis names the last row of
each kind made before it (genesis), which `audit verify` does not look for.
"""

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypedDict

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Max, Model
from django.utils import timezone

from judgements.audit import keys
from judgements.core.entry_tags import tag
from judgements.models import (
    ApiToken,
    AuditEntry,
    Budget,
    Certificate,
    ChainEntry,
    Confirmation,
    EntryKind,
    Judgement,
    JudgementCheck,
    LLMAttempt,
    LogState,
    Override,
    Panel,
    Team,
)
from judgements.models.magi_settings import magi_settings
from magi_client.canonical import canonical, entry_leaf, entry_leaf_hash, timestamp

LOG_ID = 1
Payload = Mapping[str, object]

# The rows `audit verify` looks for an entry of, by id: those after the genesis's.
LOOKED_FOR: dict[str, type[Model]] = {
    "override": Override,
    "confirmation": Confirmation,
    "certificate": Certificate,
    "audit_entry": AuditEntry,
    "attempt": LLMAttempt,
    "check": JudgementCheck,
    # Not looked for by coverage: configuration/live_state.py names a later token, user,
    # panel, budget or team that no audit row made.
    "api_token": ApiToken,
    "user": User,
    "panel": Panel,
    "budget": Budget,
    "team": Team,
}


@dataclass(frozen=True)
class Entry:
    """One entry to append: what happened, about what, and (optionally) which judgement."""

    kind: str
    subject: str
    payload: Payload
    judgement_id: int | None = None


def row_of(entry: Entry, at: datetime) -> ChainEntry:
    """The entry's row, unsaved, its leaf hash computed from exactly what is stored, and
    tagged with MAGI's key (core/entry_tags.py) so that the sequencer places it."""
    subject = entry.subject[:120]
    payload = canonical(dict(entry.payload)).decode("utf-8")
    digest = entry_leaf_hash(str(entry.kind), subject, entry.judgement_id, timestamp(at), payload)
    return ChainEntry(
        kind=entry.kind,
        subject=subject,
        judgement_id=entry.judgement_id,
        at=at,
        payload=payload,
        leaf_hash=digest,
        tag=tag(keys.tag_key(), digest),
    )


def append(
    kind: str, subject: str, payload: Payload, judgement_id: int | None = None
) -> ChainEntry:
    """Add one entry to the log's queue, in the caller's transaction."""
    row = row_of(Entry(kind, subject, payload, judgement_id), timezone.now())
    (stored,) = ChainEntry.objects.queue([row])
    return stored


def append_many(entries: Sequence[Entry]) -> list[ChainEntry]:
    """Several entries in one INSERT, in the caller's transaction."""
    at = timezone.now()
    return ChainEntry.objects.queue([row_of(entry, at) for entry in entries])


def leaf_of(row: ChainEntry, payload: Mapping[str, object]) -> dict[str, object]:
    """The leaf a stored row says it is (its payload parsed by the caller): what its leaf
    hash must be the hash of. An entry carried over from the hash chain before issue 55
    is read in that chain's form: its place there was one more than its leaf index."""
    if row.prev_sha256:
        return {
            "seq": None if row.seq is None else row.seq + 1,
            "kind": row.kind,
            "subject": row.subject,
            "at": timestamp(row.at),
            "payload": dict(payload),
            "prev_sha256": row.prev_sha256,
        }
    return entry_leaf(row.kind, row.subject, row.judgement_id, timestamp(row.at), payload)


def new_origin() -> str:
    return magi_settings.MAGI_AUDIT_LOG_ORIGIN or f"magi.invalid/{secrets.token_hex(6)}"


def start() -> None:
    """Make the log's state row and its genesis entry if this database has none yet.
    Called before a judgement's rows are stored, so the genesis counts only those made
    before; two processes starting at once make one (the second's insert fails)."""
    if LogState.objects.filter(pk=LOG_ID).exists():
        return
    try:
        with transaction.atomic():
            LogState.objects.create(pk=LOG_ID, origin=new_origin())
            append(EntryKind.GENESIS, "log", genesis())
    except IntegrityError:
        pass


class Genesis(TypedDict):
    """The genesis entry's payload: the last row id of each kind made before the log."""

    judgements_before: int
    before: dict[str, int]


def genesis() -> Genesis:
    """The log's first entry: the last row of each kind made before it, by id."""
    last = Judgement.objects.aggregate(last=Max("pk"))["last"] or 0
    before = {
        name: model._default_manager.aggregate(last=Max("pk"))["last"] or 0
        for name, model in LOOKED_FOR.items()
    }
    return {"judgements_before": last, "before": before}
