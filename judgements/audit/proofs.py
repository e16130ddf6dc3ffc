"""Proofs out of the log: its latest checkpoint, an entry's inclusion proof and the
consistency proof between two sizes, read from the stored subtrees (models/chain.py
LogNode) in one query each however many proofs are asked at once. What the log's GET
endpoints serve, what a receipt and an evidence pack carry, what `magi verify` and
witnesses check (magi_client/merkle.py)."""

from collections.abc import Sequence
from typing import TypedDict

from judgements.audit.sequencer import stored_nodes
from judgements.models import Checkpoint, LogState
from magi_client import merkle


class Inclusion(TypedDict):
    """An entry proven in a checkpoint: the signed note, its leaf index, the proof."""

    checkpoint: str
    index: int
    proof: list[str]


def latest() -> Checkpoint | None:
    return Checkpoint.objects.order_by("-size").first()


def log_size() -> int:
    state = LogState.objects.filter(pk=1).first()
    return 0 if state is None else state.size


def proofs_of(spans: Sequence[Sequence[merkle.Range]]) -> list[list[str]]:
    """Each proof's hashes (hex), given the subtrees each is made of."""
    wanted = {node for ranges in spans for span in ranges for node in merkle.nodes_of(span)}
    found = stored_nodes(sorted(wanted))
    if len(found) != len(wanted):
        raise LookupError("the log's stored subtrees do not hold this proof")
    return [
        [value.hex() for value in merkle.proof_from(ranges, found.__getitem__)] for ranges in spans
    ]


def inclusion(index: int, size: int) -> list[str]:
    return proofs_of([merkle.inclusion_ranges(index, size)])[0]


def consistency(first: int, second: int) -> list[str]:
    return proofs_of([merkle.consistency_ranges(first, second)])[0]


def inclusions(seqs: Sequence[int | None], checkpoint: Checkpoint | None) -> list[Inclusion | None]:
    """Each placed entry's inclusion in `checkpoint` (None: not placed in it yet)."""
    if checkpoint is None:
        return [None for _ in seqs]
    size = checkpoint.size
    placed = [seq for seq in seqs if seq is not None and seq < size]
    proofs = dict(
        zip(placed, proofs_of([merkle.inclusion_ranges(seq, size) for seq in placed]), strict=True)
    )
    return [
        None
        if seq not in proofs
        else Inclusion(checkpoint=checkpoint.note, index=seq, proof=proofs[seq])
        for seq in seqs
    ]
