"""The audit log's Merkle tree, as RFC 9162 (Certificate Transparency 2.0, section 2.1)
defines it: leaf and node hashes, the tree's root, which subtrees an inclusion or a
consistency proof is made of, and checking both proofs. Pure: the server's log
(judgements/audit/log.py, audit/sequencer.py) builds with it, `magi verify` and `magi
audit watch` check with it. Checked against the published test vectors
(tests/magi_client/test_merkle.py).

    leaf hash  SHA-256(0x00 || entry bytes)
    node hash  SHA-256(0x01 || left || right)
    root       of n leaves: the leaf's hash for one; for more, the node hash of the root
               of the first k leaves and of the rest, k the largest power of two below n

A stored subtree is a *node*: `level` (2**level leaves) and `index` (its place among the
subtrees of that level), covering leaves [index * 2**level, (index + 1) * 2**level).
"""

import hashlib
from collections.abc import Callable, Iterable, Sequence

LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"
EMPTY_ROOT = hashlib.sha256(b"").digest()
HASH_BYTES = 32

Node = tuple[int, int]  # (level, index)
Range = tuple[int, int]  # leaves [start, end)


class ProofFailed(ValueError):
    """A proof that does not prove what it claims, in words."""


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(LEAF_PREFIX + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(NODE_PREFIX + left + right).digest()


def split_point(size: int) -> int:
    """k: the largest power of two smaller than `size` (size > 1)."""
    return 1 << ((size - 1).bit_length() - 1)


# --- building -----------------------------------------------------------------------------


class CompactRange:
    """The right edge of a tree of `size` leaves: one complete subtree per bit of the size,
    largest first (transparency-dev's "compact range"). Appending a leaf merges equal
    subtrees; every subtree completed on the way is reported, for storing."""

    def __init__(self, size: int = 0, hashes: Sequence[bytes] = ()) -> None:
        if len(hashes) != bin(size).count("1"):
            raise ValueError(f"a tree of {size} leaves has {bin(size).count('1')} edge subtrees")
        self.size = size
        self.hashes = list(hashes)

    @staticmethod
    def edge(size: int) -> list[Node]:
        """The nodes of a tree of `size` leaves' right edge, largest first."""
        found, start = [], 0
        for level in range(size.bit_length() - 1, -1, -1):
            if size >> level & 1:
                found.append((level, start >> level))
                start += 1 << level
        return found

    def append(self, leaf: bytes) -> list[tuple[Node, bytes]]:
        """Add a leaf hash; the nodes it completes (the leaf itself first)."""
        made: list[tuple[Node, bytes]] = [((0, self.size), leaf)]
        current, level, index = leaf, 0, self.size
        self.size += 1
        while index & 1:
            current = node_hash(self.hashes.pop(), current)
            level, index = level + 1, index >> 1
            made.append(((level, index), current))
        self.hashes.append(current)
        return made

    def root(self) -> bytes:
        if not self.hashes:
            return EMPTY_ROOT
        current = self.hashes[-1]
        for left in reversed(self.hashes[:-1]):
            current = node_hash(left, current)
        return current


def root_of(leaves: Iterable[bytes]) -> bytes:
    """The root of a tree of these leaf hashes."""
    tree = CompactRange()
    for leaf in leaves:
        tree.append(leaf)
    return tree.root()


# --- proofs: which subtrees ------------------------------------------------------------


def inclusion_ranges(index: int, size: int) -> list[Range]:
    """The subtrees whose roots prove leaf `index` in a tree of `size` leaves, from the
    leaf up (RFC 9162 2.1.3.1, PATH)."""
    if not 0 <= index < size:
        raise ProofFailed(f"leaf {index} is not in a tree of {size} leaves")
    found: list[Range] = []
    start, end = 0, size
    while end - start > 1:
        k = split_point(end - start)
        if index < start + k:
            found.append((start + k, end))
            end = start + k
        else:
            found.append((start, start + k))
            start += k
    return found[::-1]


def consistency_ranges(first: int, second: int) -> list[Range]:
    """The subtrees whose roots prove a tree of `first` leaves a prefix of one of
    `second` (RFC 9162 2.1.4.1, SUBPROOF with b = true)."""
    if not 0 < first <= second:
        raise ProofFailed(f"no consistency proof from size {first} to size {second}")
    found: list[Range] = []
    start, end, whole = 0, second, True
    while end != first:
        k = split_point(end - start)
        if first - start <= k:
            found.append((start + k, end))
            end = start + k
        else:
            found.append((start, start + k))
            start, whole = start + k, False
    if not whole:
        found.append((start, end))
    return found[::-1]


def nodes_of(span: Range) -> list[Node]:
    """The stored nodes a subtree's root is made of, left to right: the subtrees of a
    proof start at a multiple of a power of two at least their size, so each splits into
    complete aligned nodes."""
    start, end = span
    found = []
    while start < end:
        level = (end - start).bit_length() - 1
        while start % (1 << level):
            level -= 1
        found.append((level, start >> level))
        start += 1 << level
    return found


def range_root(parts: Sequence[bytes]) -> bytes:
    """A subtree's root from its nodes (nodes_of's order): folded from the right."""
    current = parts[-1]
    for left in reversed(parts[:-1]):
        current = node_hash(left, current)
    return current


def proof_from(ranges: Sequence[Range], lookup: Callable[[Node], bytes]) -> list[bytes]:
    """The proof's hashes, each subtree's root from stored nodes."""
    return [range_root([lookup(node) for node in nodes_of(span)]) for span in ranges]


# --- checking -------------------------------------------------------------------------


def hash_sized(hashes: Iterable[bytes]) -> None:
    if any(len(value) != HASH_BYTES for value in hashes):
        raise ProofFailed(f"a hash of the proof is not {HASH_BYTES} bytes long")


def root_from_inclusion(leaf: bytes, index: int, size: int, proof: Sequence[bytes]) -> bytes:
    """The root a leaf and its inclusion proof lead to (RFC 9162 2.1.3.2)."""
    hash_sized([leaf, *proof])
    if not 0 <= index < size:
        raise ProofFailed(f"leaf {index} is not in a tree of {size} leaves")
    fn, sn, current = index, size - 1, leaf
    for sibling in proof:
        if sn == 0:
            raise ProofFailed("the inclusion proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            current = node_hash(sibling, current)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            current = node_hash(current, sibling)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0:
        raise ProofFailed("the inclusion proof is shorter than the tree is deep")
    return current


def check_inclusion(
    leaf: bytes, index: int, size: int, proof: Sequence[bytes], root: bytes
) -> None:
    hash_sized([root])
    if root_from_inclusion(leaf, index, size, proof) != root:
        raise ProofFailed(f"leaf {index} is not in the tree of {size} leaves with that root")


def check_consistency(
    first: int, second: int, first_root: bytes, second_root: bytes, proof: Sequence[bytes]
) -> None:
    """That the tree of `first` leaves with `first_root` is a prefix of the tree of
    `second` leaves with `second_root` (RFC 9162 2.1.4.2)."""
    hash_sized(proof)
    if first == 0:
        raise ProofFailed("there is no consistency proof from the empty tree (RFC 9162)")
    if first > second:
        raise ProofFailed(f"size {first} is larger than size {second}: the log went back")
    if first == second:
        if proof:
            raise ProofFailed("a proof between equal sizes must be empty")
        if first_root != second_root:
            raise ProofFailed(f"two different roots for the same size {first}: a fork")
        return
    if not proof:
        raise ProofFailed("the consistency proof is empty")
    path = list(proof)
    if first & (first - 1) == 0:  # a power of two: the first tree is a subtree itself
        path.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    first_hash = second_hash = path[0]
    for node in path[1:]:
        if sn == 0:
            raise ProofFailed("the consistency proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            first_hash = node_hash(node, first_hash)
            second_hash = node_hash(node, second_hash)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            second_hash = node_hash(second_hash, node)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0 or first_hash != first_root or second_hash != second_root:
        raise ProofFailed(
            f"the tree of {first} leaves is not a prefix of the tree of {second} leaves: a fork"
        )
