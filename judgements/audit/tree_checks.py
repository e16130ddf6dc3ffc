"""The log checked as a Merkle tree, for `audit verify` (audit/verification.py): every
leaf hashes what its row says, the places run 0, 1, 2 ... with no gap up to the log's
size, the tree rebuilt from the leaves has every stored subtree and every signed
checkpoint's root, each checkpoint is signed by a trusted key, and a checkpoint kept
outside the database (a witness's, the append-only directory's) is a prefix of the log:
a truncated or rebuilt tail fails here."""

import json
from collections.abc import Iterator
from dataclasses import dataclass, field

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from judgements.audit import log
from judgements.audit.row_checks import Item, Problem
from judgements.audit.sequencer import node_key
from judgements.models import ChainEntry, Checkpoint, LogNode, LogState
from magi_client import checkpoints, merkle
from magi_client.canonical import NotCanonical, canonical, leaf_hash

BATCH = 2000


@dataclass
class TreeWalk:
    """The tree as rebuilt from the leaves so far, and what it found."""

    tree: merkle.CompactRange = field(default_factory=merkle.CompactRange)
    roots: dict[int, bytes] = field(default_factory=dict)  # at the sizes asked for
    wanted: set[int] = field(default_factory=set)
    problems: list[Problem] = field(default_factory=list)
    # The first place missing (None: none): past it the tree cannot be rebuilt, and what
    # it would show is that gap again, not more problems; the rows are still checked.
    gap: int | None = None
    last: int = -1  # the last place walked


def entries() -> Iterator[list[ChainEntry]]:
    """The placed entries in order of place, a batch of rows at a time."""
    last = -1
    while True:
        # gte last + 1, not gt last: Django drops `seq > -1` on an unsigned column as
        # always true, which would let the queued entries (seq NULL) in.
        rows = list(ChainEntry.objects.filter(seq__gte=last + 1).order_by("seq")[:BATCH])
        if rows:
            yield rows
        if len(rows) < BATCH:
            return
        last = rows[-1].seq or 0


def parsed(row: ChainEntry, walk: TreeWalk) -> Item | None:
    """The entry's payload, if it is canonical and its leaf hashes to its leaf hash."""
    try:
        payload = json.loads(row.payload)
        if not isinstance(payload, dict) or canonical(payload).decode() != row.payload:
            raise ValueError("not canonical")
        digest = leaf_hash(log.leaf_of(row, payload))
    except (ValueError, NotCanonical):
        walk.problems.append(Problem(row.seq, "its payload is not canonical JSON: it was edited"))
        return None
    if digest != row.leaf_hash:
        walk.problems.append(
            Problem(
                row.seq,
                f"{row.kind} of {row.subject}: its leaf hash does not match its contents (the "
                "entry was edited, or moved from another place or judgement)",
            )
        )
        return None
    return row, payload


def add_batch(rows: list[ChainEntry], walk: TreeWalk) -> list[Item]:
    """Rebuild the tree over a batch of placed entries; compare every subtree completed
    with the stored one. The entries whose leaf checks, with their payloads."""
    items: list[Item] = []
    made: list[tuple[merkle.Node, bytes]] = []
    for row in rows:
        place = row.seq if row.seq is not None else walk.last + 1
        if place != walk.last + 1:
            walk.problems.append(
                Problem(
                    walk.last + 1,
                    f"missing: the log jumps from place {walk.last} to place {place} "
                    "(entries were deleted)",
                )
            )
            walk.gap = walk.last + 1 if walk.gap is None else walk.gap
        walk.last = place
        item = parsed(row, walk)
        if item is not None:
            items.append(item)
        if walk.gap is not None:
            continue
        made += walk.tree.append(bytes.fromhex(row.leaf_hash))
        if walk.tree.size in walk.wanted:
            walk.roots[walk.tree.size] = walk.tree.root()
    stored = {
        node.key: node.hash
        for node in LogNode.objects.filter(key__in=[node_key(node) for node, _ in made])
    }
    for node, value in made:
        if stored.get(node_key(node)) != value.hex():
            walk.problems.append(
                Problem(
                    node[1] << node[0],
                    f"the stored subtree of level {node[0]} at place {node[1] << node[0]} is not "
                    "the one its leaves make: proofs served from it would not hold",
                )
            )
            break
    return items


def check_checkpoints(
    walk: TreeWalk, state: LogState | None, keys: dict[str, Ed25519PublicKey]
) -> None:
    """Each stored checkpoint signed by a trusted key, of this log, at a size the tree
    has, with the root the leaves make; the last one at the log's size."""
    size = walk.tree.size
    origin = None if state is None else state.origin
    last = 0
    for row in Checkpoint.objects.order_by("size"):
        last = max(last, row.size)
        if walk.gap is not None and row.size > walk.gap:
            continue  # its leaves are not all there: the gap is named, once
        try:
            found = checkpoints.checked(row.note, keys, origin)
        except checkpoints.BadCheckpoint as exc:
            walk.problems.append(Problem(None, f"checkpoint at size {row.size}: {exc}"))
            continue
        if found.size != row.size or found.root.hex() != row.root_hash:
            walk.problems.append(
                Problem(None, f"checkpoint at size {row.size}: its row was edited")
            )
        elif row.size > size:
            walk.problems.append(
                Problem(
                    size,
                    f"a checkpoint signed at size {row.size}, but the log ends at {size}: "
                    "entries at its end were deleted",
                )
            )
        elif walk.roots.get(row.size) != found.root:
            walk.problems.append(
                Problem(
                    row.size - 1,
                    f"checkpoint at size {row.size}: the entries before it do not make its "
                    "root (they were changed or rebuilt)",
                )
            )
    state_size = 0 if state is None else state.size
    if walk.gap is None and (state_size != size or (size and last != size)):
        walk.problems.append(
            Problem(
                size,
                f"the log holds {size} placed entries, its state says {state_size} and its last "
                f"checkpoint {last}: entries at its end were deleted or rewritten",
            )
        )


def check_kept(walk: TreeWalk, kept: checkpoints.Checkpoint, state: LogState | None) -> None:
    """That the log extends a checkpoint kept outside the database."""
    if state is not None and kept.origin != state.origin:
        walk.problems.append(
            Problem(
                None,
                f"the kept checkpoint is of log {kept.origin!r}, this database's is "
                f"{state.origin!r}",
            )
        )
    elif walk.gap is not None and kept.size > walk.gap:
        return  # its leaves are not all there: the gap is named, once
    elif kept.size > walk.tree.size:
        walk.problems.append(
            Problem(
                walk.tree.size,
                f"the log has {walk.tree.size} entries but the kept checkpoint has "
                f"{kept.size}: its tail was cut off (a truncated log, its head reset)",
            )
        )
    elif kept.size and walk.roots.get(kept.size) != kept.root:
        walk.problems.append(
            Problem(
                kept.size - 1,
                f"the log's first {kept.size} entries are not those of the kept checkpoint: "
                "they were rewritten (a fork)",
            )
        )
