"""The audit log's Merkle tree against the published vectors: RFC 6962/9162's reference
tree of eight leaves (its leaf, node and root hashes) and transparency-dev/merkle's
inclusion and consistency proof cases, each a good proof or a broken one that must fail
(data/merkle_vectors.json); and the proofs built from stored nodes check, for every
leaf and every pair of sizes of trees up to 70 leaves (magi_client/merkle.py)."""

import base64
import json
from pathlib import Path

import pytest

from magi_client import merkle

VECTORS = json.loads((Path(__file__).parent / "data" / "merkle_vectors.json").read_text())
# The reference tree (transparency-dev/merkle testonly/constants.go, from RFC 6962's).
LEAVES = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657",
          "606162636465666768696a6b6c6d6e6f"]  # fmt: skip
ROOTS = [
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]


def b64(value: str | None) -> bytes:
    return base64.b64decode(value or "")


def proof_of(case: dict) -> list[bytes]:
    return [b64(item) for item in case["proof"] or []]


def test_the_reference_trees_roots():
    hashes = [merkle.leaf_hash(bytes.fromhex(leaf)) for leaf in LEAVES]
    for size, root in enumerate(ROOTS):
        assert merkle.root_of(hashes[:size]).hex() == root


@pytest.mark.parametrize("case", VECTORS["inclusion"], ids=lambda case: case["file"])
def test_the_published_inclusion_vectors(case):
    def check() -> None:
        merkle.check_inclusion(
            b64(case["leafHash"]), case["leafIdx"], case["treeSize"], proof_of(case),
            b64(case["root"]),
        )  # fmt: skip

    if case["wantErr"]:
        with pytest.raises(merkle.ProofFailed):
            check()
    else:
        check()


@pytest.mark.parametrize("case", VECTORS["consistency"], ids=lambda case: case["file"])
def test_the_published_consistency_vectors(case):
    def check() -> None:
        merkle.check_consistency(
            case["size1"], case["size2"], b64(case["root1"]), b64(case["root2"]), proof_of(case)
        )

    if case["wantErr"]:
        with pytest.raises(merkle.ProofFailed):
            check()
    else:
        check()


def stored_tree(size: int) -> tuple[dict, list[bytes]]:
    """Every node of a tree of `size` leaves as a sequencer stores them, and the roots
    of each of its prefixes (roots[n]: the first n leaves)."""
    tree, nodes, roots = merkle.CompactRange(), {}, [merkle.EMPTY_ROOT]
    for number in range(size):
        for node, value in tree.append(merkle.leaf_hash(number.to_bytes(4, "big"))):
            nodes[node] = value
        roots.append(tree.root())
    return nodes, roots


def test_proofs_made_from_stored_nodes_check_for_every_leaf_and_size():
    nodes, roots = stored_tree(70)
    for size in range(1, 71):
        for index in range(size):
            proof = merkle.proof_from(merkle.inclusion_ranges(index, size), nodes.__getitem__)
            merkle.check_inclusion(nodes[(0, index)], index, size, proof, roots[size])
        for first in range(1, size + 1):
            proof = merkle.proof_from(merkle.consistency_ranges(first, size), nodes.__getitem__)
            merkle.check_consistency(first, size, roots[first], roots[size], proof)


def test_the_reference_vectors_proofs_are_the_ones_built():
    """Our proofs are byte for byte the published ones, not just proofs that check."""
    nodes, _ = stored_tree(0)
    tree = merkle.CompactRange()
    for leaf in LEAVES:
        for node, value in tree.append(merkle.leaf_hash(bytes.fromhex(leaf))):
            nodes[node] = value
    for case in VECTORS["inclusion"]:
        if case["desc"] == "happy path" and case["treeSize"] <= 8:
            ranges = merkle.inclusion_ranges(case["leafIdx"], case["treeSize"])
            assert merkle.proof_from(ranges, nodes.__getitem__) == proof_of(case)
    for case in VECTORS["consistency"]:
        if case["desc"] == "happy path" and 0 < case["size1"] <= case["size2"] <= 8:
            ranges = merkle.consistency_ranges(case["size1"], case["size2"])
            assert merkle.proof_from(ranges, nodes.__getitem__) == proof_of(case)


def test_a_forked_tree_fails_consistency_and_a_leaf_from_it_fails_inclusion():
    nodes, roots = stored_tree(20)
    forked = merkle.CompactRange()
    for number in range(20):
        forked.append(merkle.leaf_hash((99 if number == 7 else number).to_bytes(4, "big")))
    proof = merkle.proof_from(merkle.consistency_ranges(10, 20), nodes.__getitem__)
    with pytest.raises(merkle.ProofFailed, match="a fork"):
        merkle.check_consistency(10, 20, roots[10], forked.root(), proof)
    inclusion = merkle.proof_from(merkle.inclusion_ranges(7, 20), nodes.__getitem__)
    with pytest.raises(merkle.ProofFailed):
        merkle.check_inclusion(nodes[(0, 7)], 7, 20, inclusion, forked.root())
    with pytest.raises(merkle.ProofFailed, match="went back"):
        merkle.check_consistency(20, 10, roots[20], roots[10], [])
