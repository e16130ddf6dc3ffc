"""Checkpoints as signed notes (magi_client/checkpoints.py): the key hash and signature
of the signed-note format's published example (golang.org/x/mod/sumdb/note's
PeterNeumann key), a checkpoint signed and read back, and each way of changing one
refused."""

import base64

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from magi_client import checkpoints

# The signed-note format's own example: a verifier key and a note it signed.
NOTE_KEY = base64.b64decode("ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW")
NOTE_TEXT = (
    "If you think cryptography is the answer to your problem,\n"
    "then you don't know what your problem is.\n"
)
NOTE_SIGNATURE = (
    "x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM="
)
ORIGIN = "magi.test/audit-log"
ROOT = bytes(range(32))


def test_the_key_hash_and_signature_of_the_formats_published_example():
    public = NOTE_KEY[1:]
    signature = base64.b64decode(NOTE_SIGNATURE)
    assert (
        checkpoints.key_hash("PeterNeumann", public) == signature[:4] == bytes.fromhex("c74f20a3")
    )
    Ed25519PublicKey.from_public_bytes(public).verify(signature[4:], NOTE_TEXT.encode())


def signed(key: Ed25519PrivateKey, size: int = 7, root: bytes = ROOT) -> str:
    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return checkpoints.signed_note(ORIGIN, size, root, public, key.sign)


def test_a_checkpoint_reads_back_as_signed():
    key = Ed25519PrivateKey.generate()
    text = signed(key)
    assert text.startswith(f"{ORIGIN}\n7\n{base64.b64encode(ROOT).decode()}\n\n\u2014 {ORIGIN} ")
    found = checkpoints.checked(text, {"k": key.public_key()}, ORIGIN)
    assert (found.origin, found.size, found.root, found.text) == (ORIGIN, 7, ROOT, text)


def respelled(text: str) -> str:
    """The signature's last character before its padding with its unused bits set: the
    same bytes to a lenient decoder, another spelling of them."""
    at = text.rindex("=") - 1  # 68 bytes: the last character carries two unused bits
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    changed = text[:at] + alphabet[alphabet.index(text[at]) ^ 1] + text[at + 1 :]
    assert base64.b64decode(changed.split(" ")[-1]) == base64.b64decode(text.split(" ")[-1])
    return changed


@pytest.mark.parametrize(
    "change, failure",
    [
        (lambda text: text.replace("\n7\n", "\n8\n", 1), "does not match its contents"),
        (lambda text: text.replace(ORIGIN, "other.log", 1), "not signed by any of the keys"),
        (lambda text: text.replace("\n\n", "\n", 1), "no empty line"),
        (lambda text: text.replace("\n7\n", "\n07\n", 1), "its size in decimal"),
        (lambda text: text.split("\n\n")[0] + "\n\n", "at least one signature"),
        (respelled, "signature is not base64"),
    ],
)
def test_a_changed_checkpoint_is_refused(change, failure):
    key = Ed25519PrivateKey.generate()
    with pytest.raises(checkpoints.BadCheckpoint, match=failure):
        checkpoints.checked(change(signed(key)), {"k": key.public_key()})


def test_a_checkpoint_signed_by_another_key_or_of_another_log_is_refused():
    key, other = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    with pytest.raises(checkpoints.BadCheckpoint, match="not signed by any of the keys given"):
        checkpoints.checked(signed(other), {"k": key.public_key()})
    with pytest.raises(checkpoints.BadCheckpoint, match="of log"):
        checkpoints.checked(signed(key), {"k": key.public_key()}, "another/log")
