"""Entry tags (judgements/core/entry_tags.py): HMAC-SHA256 of an entry's leaf hash with a
key derived from the signing seed by HKDF-SHA256 and the documented label; the tag of one
leaf hash is no other's, nor another key's."""

import hashlib
import hmac

from judgements.core.entry_tags import LABEL, tag, tag_checks, tag_key

SEED = bytes(range(32))
LEAF = hashlib.sha256(b"\x00" + b'{"kind":"verdict"}').hexdigest()


def rfc5869(seed: bytes, info: bytes) -> bytes:
    """HKDF-SHA256 written out from RFC 5869 (no salt: 32 zero bytes), 32 bytes."""
    prk = hmac.digest(bytes(32), seed, "sha256")
    return hmac.digest(prk, info + b"\x01", "sha256")


def test_the_key_is_hkdf_sha256_of_the_seed_with_the_documented_label():
    assert LABEL == b"magi audit log entry tag/1"
    assert tag_key(SEED) == rfc5869(SEED, LABEL)
    assert tag_key(SEED) != SEED


def test_a_tag_checks_for_its_leaf_hash_and_key_only():
    key = tag_key(SEED)
    given = tag(key, LEAF)
    assert given == hmac.digest(key, bytes.fromhex(LEAF), "sha256").hex()
    assert tag_checks(key, LEAF, given)
    assert not tag_checks(tag_key(bytes(32)), LEAF, given)
    for position in range(len(LEAF)):
        other = LEAF[:position] + ("0" if LEAF[position] != "0" else "1") + LEAF[position + 1 :]
        assert not tag_checks(key, other, given)


def test_what_is_not_a_tag_or_a_leaf_hash_never_checks():
    key = tag_key(SEED)
    given = tag(key, LEAF)
    for leaf, claimed in [
        (LEAF, ""), (LEAF, given.upper()), (LEAF, given[:-1]), (LEAF, given + "0"),
        ("zz" * 32, given), (LEAF[:-2], tag(key, LEAF[:-2])), ("", tag(key, "")),
        (LEAF, "é" * 64),
    ]:  # fmt: skip
        assert not tag_checks(key, leaf, claimed)
