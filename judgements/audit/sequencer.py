"""The sequencer: the one worker at a time that gives queued log entries their places in
the Merkle tree, a batch at a time, and signs a checkpoint for each batch (as Trillian's
and Rekor's sequencers integrate queued leaves). Writers never wait for it: they only
queue (audit/log.py).

It holds the log's row (LogState) with the lease every background job uses
(models/leases.py; its states are drawn in models/chain.py) and, while it places a
batch, the row's lock too, so that two workers whose leases overlapped (one paused past
its lease) still place one batch after the other: one tree, never a fork. Every worker
runs it on its own timer (engine/runner.py); whoever claims the row does the work.

It places only what a MAGI process queued: an entry whose contents hash to its leaf hash
and whose tag checks with MAGI's key (core/entry_tags.py), once. Any other queued entry
(written into the database with the rows it describes, a tag copied or edited, a copy of
an entry already in the log) is set aside, never placed or signed, logged as an error,
and named by `audit verify`; the entries behind it are placed as usual.
"""

import logging
from datetime import datetime
from typing import NamedTuple

from django.db import transaction
from django.db.models import F

from judgements.audit import keys, log
from judgements.core.entry_tags import tag_checks
from judgements.models import ChainEntry, Checkpoint, LogNode, LogState, SetAside
from judgements.models.magi_settings import magi_settings
from magi_client import checkpoints, merkle
from magi_client.canonical import NotCanonical, entry_leaf_hash, timestamp

logger = logging.getLogger(__name__)

LOG_ID = log.LOG_ID
# Leaf hashes per query asking which the log already has (under every database's limit
# of parameters, whatever MAGI_AUDIT_LOG_BATCH is).
LOOKUP_BATCH = 1000


def node_key(node: merkle.Node) -> int:
    """A stored subtree's key: index * 64 + level (models/chain.py LogNode)."""
    level, index = node
    return index * 64 + level


def stored_nodes(nodes: list[merkle.Node]) -> dict[merkle.Node, bytes]:
    found = {
        row.key: bytes.fromhex(row.hash)
        for row in LogNode.objects.filter(key__in=[node_key(node) for node in nodes])
    }
    return {node: found[node_key(node)] for node in nodes if node_key(node) in found}


def edge_of(size: int) -> merkle.CompactRange:
    """The tree built so far, as its right edge read back from the stored nodes."""
    edge = merkle.CompactRange.edge(size)
    found = stored_nodes(edge)
    if len(found) != len(edge):
        raise RuntimeError(f"the log's stored nodes do not hold its tree of {size} leaves")
    return merkle.CompactRange(size, [found[node] for node in edge])


def run(worker_id: str) -> int:
    """Claim the sequencer's lease if nobody holds it, place every queued entry, a batch
    and a checkpoint at a time, and let the lease go. How many entries it placed."""
    log.start()
    held = LogState.objects.filter(pk=LOG_ID)
    if not held.claim(worker_id, 1, order=("pk",)):
        return 0
    placed = 0
    try:
        while True:
            batch = place_batch(worker_id, magi_settings.MAGI_AUDIT_LOG_BATCH)
            placed += batch.placed
            if batch.taken < magi_settings.MAGI_AUDIT_LOG_BATCH:
                return placed
            held.renew(worker_id)
    finally:
        held.release(worker_id)


class Batch(NamedTuple):
    """What one batch did: queued entries taken, and of those placed (the rest set aside)."""

    taken: int
    placed: int


def place_batch(worker_id: str, limit: int) -> Batch:
    """Up to `limit` queued entries taken, in the order they were queued: those MAGI
    queued placed, with their subtrees stored and a checkpoint signed, the others set
    aside. Nothing when none waits or the lease is gone."""
    with transaction.atomic():
        state = (
            LogState.objects.select_for_update().filter(pk=LOG_ID, lease_owner=worker_id).first()
        )
        if state is None:
            return Batch(0, 0)
        rows = [
            Queued(*values)
            for values in ChainEntry.objects.waiting()
            .order_by("id")
            .values_list(*Queued._fields)[:limit]
        ]
        if not rows:
            return Batch(0, 0)
        queued, refused = screened(rows)
        for why in SetAside:
            ids = [row.id for row, reason in refused if reason == why]
            if ids:
                set_aside(ids, why, worker_id)
        if not queued:
            return Batch(len(rows), 0)
        tree = edge_of(state.size)
        nodes = []
        for row in queued:
            for node, value in tree.append(bytes.fromhex(row.leaf_hash)):
                nodes.append(LogNode(key=node_key(node), hash=value.hex()))
        LogNode.objects.bulk_create(nodes, batch_size=1000)
        place([row.id for row in queued], state.size)
        root = tree.root()
        Checkpoint.objects.create(size=tree.size, root_hash=root.hex(), note=signed(state, tree))
        LogState.objects.filter(pk=LOG_ID).update(size=tree.size, root_hash=root.hex())
    logger.info(
        "audit log: %s entries placed, size %s -> %s, checkpoint signed by worker %s",
        len(queued), state.size, tree.size, worker_id,
    )  # fmt: skip
    return Batch(len(rows), len(queued))


class Queued(NamedTuple):
    """A queued entry as the sequencer reads it: its id and what `made_by_magi` checks."""

    id: int
    kind: str
    subject: str
    judgement_id: int | None
    at: datetime
    payload: str
    prev_sha256: str
    leaf_hash: str
    tag: str

    @classmethod
    def of(cls, row: ChainEntry) -> "Queued":
        """The same fields the sequencer's query reads (`values_list(*Queued._fields)`)."""
        return cls._make(getattr(row, name) for name in cls._fields)


def made_by_magi(row: Queued, key: bytes) -> bool:
    """Whether a queued entry is as a MAGI process queued it: its contents hash to its
    leaf hash, which its tag authenticates with MAGI's key (one leaf hash, one set of
    contents: the leaf is the canonical JSON of all of them). An entry in the form of the
    hash chain before issue 55 never is: migration 0029 placed every one of those."""
    if row.prev_sha256:
        return False
    try:
        digest = entry_leaf_hash(
            row.kind, row.subject, row.judgement_id, timestamp(row.at), row.payload
        )
    except (NotCanonical, UnicodeEncodeError):
        return False
    return digest == row.leaf_hash and tag_checks(key, row.leaf_hash, row.tag)


def screened(rows: list[Queued]) -> tuple[list[Queued], list[tuple[Queued, SetAside]]]:
    """The queued rows to place, in order, and those to set aside, with why: not made by
    MAGI, or a leaf already placed (or earlier in the queue): a copy."""
    if not rows:
        return [], []  # no key read: verify with --keys runs where this server's is broken
    key = keys.tag_key()
    hashes = sorted({row.leaf_hash for row in rows})
    seen: set[str] = set()
    for start in range(0, len(hashes), LOOKUP_BATCH):
        placed = ChainEntry.objects.filter(
            seq__isnull=False, leaf_hash__in=hashes[start : start + LOOKUP_BATCH]
        )
        seen.update(placed.values_list("leaf_hash", flat=True))
    taken: list[Queued] = []
    refused: list[tuple[Queued, SetAside]] = []
    for row in rows:
        if not made_by_magi(row, key):
            refused.append((row, SetAside.UNTAGGED))
        elif row.leaf_hash in seen:
            refused.append((row, SetAside.REPEAT))
        else:
            seen.add(row.leaf_hash)
            taken.append(row)
    return taken, refused


def set_aside(ids: list[int], why: SetAside, worker_id: str) -> None:
    """The one way out of the queue but placing: queued -> set aside, never placed or
    signed (models/chain.py). Logged as an error: someone wrote into the log's queue."""
    ChainEntry.objects.waiting().filter(pk__in=ids).update(set_aside=why)
    logger.error(
        "audit log: queued entries %s set aside, not placed: %s (worker %s)",
        ", ".join(map(str, ids)), why.label, worker_id,
    )  # fmt: skip


def place(queued: list[int], first: int) -> None:
    """Give the queued rows (their ids) their places from `first` on, in the order given:
    one UPDATE per run of consecutive ids (ids a writer took and has not committed, or an
    entry set aside, leave a gap)."""
    start = 0
    for end in range(1, len(queued) + 1):
        if end == len(queued) or queued[end] != queued[end - 1] + 1:
            low, high = queued[start], queued[end - 1]
            ChainEntry.objects.filter(pk__gte=low, pk__lte=high).update(
                seq=F("id") + (first + start - low)
            )
            start = end


def signed(state: LogState, tree: merkle.CompactRange) -> str:
    """The checkpoint of `tree` as a signed note, under the log's origin."""
    public = keys.public_bytes(keys.signing_key())
    return checkpoints.signed_note(state.origin, tree.size, tree.root(), public, keys.sign_bytes)
