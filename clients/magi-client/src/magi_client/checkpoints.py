"""A checkpoint of the audit log: its size and root hash, signed, as the transparency-log
ecosystem writes them (C2SP tlog-checkpoint in a C2SP signed note), so witnesses and
monitors written for other logs read MAGI's too. Pure: the server's sequencer writes them
(judgements/audit/sequencer.py), `magi audit watch`, `magi verify` and `manage.py audit
verify --checkpoint` read and check them.

    magi.example.com/audit-log              the log's origin, one line
    1523                                    the tree size, in decimal
    SGVsbG8gd29ybGQhIFRoaXMgaXMgYSByb290IGhhc2g=   the root hash, base64
                                            an empty line ends the signed text
    — magi.example.com/audit-log Ab3d...    a signature: "— ", the key's name (the
                                            origin), a space, base64 of the key's
                                            4-byte hash then the 64-byte Ed25519
                                            signature over the text above the empty line

A key's 4-byte hash is the first four bytes of SHA-256(name, "\\n", 0x01, the 32-byte
public key): a checker given keys finds the signature made by one of them.
"""

import base64
import binascii
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

SIGNATURE_DASH = "\u2014 "
ED25519_TYPE = b"\x01"
MAX_NOTE_BYTES = 1_000_000


class BadCheckpoint(ValueError):
    """Not a checkpoint, or not one signed by a key given; in words."""


@dataclass(frozen=True)
class Checkpoint:
    origin: str
    size: int
    root: bytes
    text: str  # the whole note, as signed and served

    @property
    def body(self) -> str:
        return body_of(self.origin, self.size, self.root)


def body_of(origin: str, size: int, root: bytes) -> str:
    """The signed text of a checkpoint."""
    return f"{origin}\n{size}\n{base64.b64encode(root).decode('ascii')}\n"


def key_hash(name: str, public: bytes) -> bytes:
    return hashlib.sha256(name.encode("utf-8") + b"\n" + ED25519_TYPE + public).digest()[:4]


def signed_note(
    origin: str, size: int, root: bytes, public: bytes, sign: Callable[[bytes], bytes]
) -> str:
    """The checkpoint as a signed note, signed by `sign` with the key whose public half is
    `public`, under the origin's name."""
    body = body_of(origin, size, root)
    signature = key_hash(origin, public) + sign(body.encode("utf-8"))
    return f"{body}\n{SIGNATURE_DASH}{origin} {base64.b64encode(signature).decode('ascii')}\n"


def strict_base64(text: str) -> bytes:
    """Base64 in its one spelling: the decoder alone also takes a last character whose
    unused bits are set, which would let one checkpoint be written several ways."""
    raw = base64.b64decode(text, validate=True)
    if base64.b64encode(raw).decode("ascii") != text:
        raise binascii.Error("not in its one spelling")
    return raw


def parse(text: str) -> tuple[Checkpoint, list[tuple[str, bytes, bytes]]]:
    """The checkpoint a note holds and its signature lines (name, key hash, signature);
    BadCheckpoint when it is not one."""
    if len(text.encode("utf-8")) > MAX_NOTE_BYTES or "\n\n" not in text:
        raise BadCheckpoint("not a signed checkpoint: no empty line before its signatures")
    body, _, signed = text.partition("\n\n")
    lines = body.split("\n")
    if len(lines) < 3:
        raise BadCheckpoint("a checkpoint has an origin, a size and a root hash")
    origin, size_text, root_text = lines[:3]
    if not origin or not size_text.isdigit() or (size_text != "0" and size_text.startswith("0")):
        raise BadCheckpoint("a checkpoint's second line is its size in decimal")
    try:
        root = strict_base64(root_text)
    except binascii.Error:
        raise BadCheckpoint("a checkpoint's third line is its root hash in base64") from None
    if len(root) != 32:
        raise BadCheckpoint("a checkpoint's root hash is 32 bytes")
    signatures = []
    for line in signed.split("\n"):
        if not line:
            continue
        if not line.startswith(SIGNATURE_DASH) or line.count(" ") != 2:
            raise BadCheckpoint(f"not a signature line: {line[:80]!r}")
        name, encoded = line[len(SIGNATURE_DASH) :].split(" ")
        try:
            raw = strict_base64(encoded)
        except binascii.Error:
            raise BadCheckpoint("a signature line's signature is not base64") from None
        if len(raw) < 5:
            raise BadCheckpoint("a signature line is too short")
        signatures.append((name, raw[:4], raw[4:]))
    if not text.endswith("\n") or not signatures:
        raise BadCheckpoint("a checkpoint carries at least one signature line")
    return Checkpoint(origin, int(size_text), root, text), signatures


def checked(
    text: str, keys: Mapping[str, Ed25519PublicKey], origin: str | None = None
) -> Checkpoint:
    """The checkpoint if one of `keys` (kid -> key) signed it under its origin's name
    (and its origin is `origin`, when given); BadCheckpoint naming what failed."""
    checkpoint, signatures = parse(text)
    if origin is not None and checkpoint.origin != origin:
        raise BadCheckpoint(f"the checkpoint is of log {checkpoint.origin!r}, not {origin!r}")
    body = checkpoint.body.encode("utf-8")
    if not text.startswith(checkpoint.body + "\n"):
        raise BadCheckpoint("the checkpoint's text is not in the one form it is signed in")
    for name, hashed, signature in signatures:
        if name != checkpoint.origin:
            continue
        for key in keys.values():
            if key_hash(name, key.public_bytes(Encoding.Raw, PublicFormat.Raw)) != hashed:
                continue
            try:
                key.verify(signature, body)
            except InvalidSignature:
                raise BadCheckpoint(
                    "the checkpoint's signature does not match its contents: it was changed "
                    "after it was signed, or signed with another key"
                ) from None
            return checkpoint
    raise BadCheckpoint("the checkpoint is not signed by any of the keys given")
