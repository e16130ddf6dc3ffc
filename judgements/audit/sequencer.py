"""The sequencer: the one worker at a time that gives queued log entries their places in
the Merkle tree, a batch at a time, and signs a checkpoint for each batch (as Trillian's
and Rekor's sequencers integrate queued leaves). Writers never wait for it: they only
queue (audit/log.py).

It holds the log's row (LogState) with the lease every background job uses
(models/leases.py; its states are drawn in models/chain.py) and, while it places a
batch, the row's lock too, so that two workers whose leases overlapped (one paused past
its lease) still place one batch after the other: one tree, never a fork. Every worker
runs it on its own timer (engine/runner.py); whoever claims the row does the work.
"""

import logging

from django.conf import settings
from django.db import transaction
from django.db.models import F

from judgements.audit import keys, log
from judgements.models import ChainEntry, Checkpoint, LogNode, LogState
from magi_client import checkpoints, merkle

logger = logging.getLogger(__name__)

LOG_ID = log.LOG_ID


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
            count = place_batch(worker_id, settings.MAGI_AUDIT_LOG_BATCH)
            placed += count
            if count < settings.MAGI_AUDIT_LOG_BATCH:
                return placed
            held.renew(worker_id)
    finally:
        held.release(worker_id)


def place_batch(worker_id: str, limit: int) -> int:
    """Up to `limit` queued entries placed, in the order they were queued, with their
    subtrees stored and a checkpoint signed; 0 when none waits or the lease is gone."""
    with transaction.atomic():
        state = (
            LogState.objects.select_for_update().filter(pk=LOG_ID, lease_owner=worker_id).first()
        )
        if state is None:
            return 0
        queued = list(
            ChainEntry.objects.filter(seq__isnull=True)
            .order_by("id")
            .values_list("id", "leaf_hash")[:limit]
        )
        if not queued:
            return 0
        tree = edge_of(state.size)
        nodes = []
        for _, leaf in queued:
            for node, value in tree.append(bytes.fromhex(leaf)):
                nodes.append(LogNode(key=node_key(node), hash=value.hex()))
        LogNode.objects.bulk_create(nodes, batch_size=1000)
        place(queued, state.size)
        root = tree.root()
        Checkpoint.objects.create(size=tree.size, root_hash=root.hex(), note=signed(state, tree))
        LogState.objects.filter(pk=LOG_ID).update(size=tree.size, root_hash=root.hex())
    logger.info(
        "audit log: %s entries placed, size %s -> %s, checkpoint signed by worker %s",
        len(queued), state.size, tree.size, worker_id,
    )  # fmt: skip
    return len(queued)


def place(queued: list[tuple[int, str]], first: int) -> None:
    """Give the queued rows their places from `first` on, in the order given: one UPDATE
    per run of consecutive ids (ids a writer took and has not committed leave a gap)."""
    start = 0
    for end in range(1, len(queued) + 1):
        if end == len(queued) or queued[end][0] != queued[end - 1][0] + 1:
            low, high = queued[start][0], queued[end - 1][0]
            ChainEntry.objects.filter(pk__gte=low, pk__lte=high).update(
                seq=F("id") + (first + start - low)
            )
            start = end


def signed(state: LogState, tree: merkle.CompactRange) -> str:
    """The checkpoint of `tree` as a signed note, under the log's origin."""
    public = keys.public_bytes(keys.signing_key())
    return checkpoints.signed_note(state.origin, tree.size, tree.root(), public, keys.sign_bytes)
