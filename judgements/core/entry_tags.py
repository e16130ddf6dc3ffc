"""Entry tags: how the process that queues an audit log entry shows the sequencer that MAGI
wrote it, with a secret the database does not hold. Pure, no Django.

A tag is HMAC-SHA256 over the entry's 32-byte leaf hash, keyed by a key derived from the
signing key's Ed25519 seed with HKDF-SHA256 (RFC 5869; no salt, the label below as its
info). The leaf hash is SHA-256 over everything the leaf holds (format, kind, subject,
judgement, time, payload: magi_client/canonical.py), so a tag binds all of it: a tag
copied onto another entry, or an entry edited under its tag, does not check.

Why an HMAC and not a signature per entry: only the sequencer checks a tag, and it holds
the same seed; an HMAC costs a writer about 2 microseconds where an Ed25519 signature
costs tens, and anyone else checks the entry, once placed, by the checkpoint signed over
it. Why derived from the seed: no new secret to keep or rotate, and the label keeps the
derived key apart from every other use of the seed (a tag is never an Ed25519 signature
and no signature is a tag).
"""

import hashlib
import hmac

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

# HKDF's info: what the derived key is for, and the version of the scheme.
LABEL = b"magi audit log entry tag/1"


def tag_key(seed: bytes) -> bytes:
    """The 32-byte key that tags entries, derived from the signing key's seed."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=LABEL).derive(seed)


def tag(key: bytes, leaf_hash: str) -> str:
    """The tag of the entry whose leaf hash (hex) is given: HMAC-SHA256, hex."""
    return hmac.digest(key, bytes.fromhex(leaf_hash), "sha256").hex()


def tag_checks(key: bytes, leaf_hash: str, given: str) -> bool:
    """Whether `given` is the tag of `leaf_hash` under `key` (in constant time; False for
    a leaf hash or tag that is not 32 bytes in hex)."""
    try:
        raw = bytes.fromhex(leaf_hash)
    except ValueError:
        return False
    if len(raw) != hashlib.sha256().digest_size:
        return False
    return hmac.compare_digest(tag(key, leaf_hash).encode(), given.encode("utf-8", "replace"))
