"""The Ed25519 key that signs receipts and the log's checkpoints, with its key id, and the
public keys anyone checks them with (published as a JWK set at
/.well-known/magi-keys.json). Kept like the secret key: `MAGI_AUDIT_SIGNING_KEY` for a
deployment, else `var/audit-signing-key`, made on first use. Rotation keeps the public
halves of earlier keys (`MAGI_AUDIT_RETIRED_KEYS`, `var/audit-retired-keys`) so old
receipts still check, each with its retirement signed by a later key: a checker trusts a
retired key only when a key it trusts signed its retirement
(magi_client/receipts.py trusted_keys), so a line added to var/ is not a key."""

import functools
import os
import secrets
from pathlib import Path
from typing import Literal, TypedDict

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.conf import settings

from judgements.core import entry_tags
from judgements.core.errors import MagiError
from judgements.models.magi_settings import magi_settings
from magi_client.canonical import canonical
from magi_client.receipts import (
    Jwk,
    NotValid,
    RetiredJwk,
    Retirement,
    b64url,
    jwk_of,
    retirement_body,
    unb64url,
)

KEY_FILE = "audit-signing-key"
RETIRED_FILE = "audit-retired-keys"


class KeyRefused(MagiError):
    """A signing or retired key that is not an Ed25519 key in base64url."""


def new_seed() -> str:
    """A fresh private seed in base64url, as MAGI_AUDIT_SIGNING_KEY takes it."""
    return b64url(secrets.token_bytes(32))


def key_file() -> Path:
    return Path(settings.VAR_DIR) / KEY_FILE


def retired_file() -> Path:
    return Path(settings.VAR_DIR) / RETIRED_FILE


def kept_seed() -> str:
    """var/audit-signing-key, made (readable by its owner only) if it is not there; two
    processes starting at once keep the first one written."""
    path = key_file()
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(descriptor, "w") as handle:
                handle.write(new_seed() + "\n")
    return path.read_text().strip()


@functools.lru_cache(maxsize=8)
def private_key(seed: str) -> Ed25519PrivateKey:
    try:
        raw = unb64url(seed)
    except NotValid as exc:
        raise KeyRefused(f"MAGI_AUDIT_SIGNING_KEY: {exc}") from None
    if len(raw) != 32:
        raise KeyRefused("MAGI_AUDIT_SIGNING_KEY: an Ed25519 seed is 32 bytes in base64url")
    return Ed25519PrivateKey.from_private_bytes(raw)


def signing_key() -> Ed25519PrivateKey:
    return private_key(magi_settings.MAGI_AUDIT_SIGNING_KEY or kept_seed())


def tag_key() -> bytes:
    """The key that tags queued log entries (core/entry_tags.py), derived from the current
    signing key's seed. On every append, so var/'s key file is read again only when it
    changed (a rotation), not each time."""
    if magi_settings.MAGI_AUDIT_SIGNING_KEY:
        return tag_key_of(magi_settings.MAGI_AUDIT_SIGNING_KEY)
    path = os.path.join(settings.VAR_DIR, KEY_FILE)  # a str: cheaper than a Path here
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return tag_key_of(kept_seed())
    return kept_tag_key(path, found.st_mtime_ns, found.st_size, found.st_ino)


@functools.lru_cache(maxsize=8)
def kept_tag_key(path: str, modified: int, size: int, inode: int) -> bytes:
    """var/'s key file's tag key, for one version of the file (its time, size, inode)."""
    return tag_key_of(Path(path).read_text().strip())


@functools.lru_cache(maxsize=8)
def tag_key_of(seed: str) -> bytes:
    return entry_tags.tag_key(private_key(seed).private_bytes_raw())


def public_bytes(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def current_kid() -> str:
    return jwk_of(public_bytes(signing_key()))["kid"]


def retired_lines() -> list[str]:
    """The retired keys as kept: the setting's, then var/'s; each `X.KID.SIGNATURE` (the
    public key, and its retirement signed by key KID) or, from before issue 55, `X`."""
    kept = retired_file().read_text().split() if retired_file().is_file() else []
    return [*magi_settings.MAGI_AUDIT_RETIRED_KEYS, *kept]


def retired_jwk(line: str) -> RetiredJwk:
    public, _, signed = line.partition(".")
    kid, _, value = signed.partition(".")
    try:
        raw = unb64url(public)
    except NotValid:
        raw = b""
    if len(raw) != 32:
        raise KeyRefused(f"MAGI_AUDIT_RETIRED_KEYS: {public!r} is not an Ed25519 public key")
    key = jwk_of(raw)
    return RetiredJwk(
        kty=key["kty"], crv=key["crv"], x=key["x"], kid=key["kid"], use=key["use"],
        alg=key["alg"], retired=Retirement(kid=kid, value=value) if kid and value else {},
    )  # fmt: skip


class Jwks(TypedDict):
    """The public keys, as /.well-known/magi-keys.json serves them (a retired one a
    RetiredJwk)."""

    keys: list[Jwk]


def jwks() -> Jwks:
    """The current key and every retired one, as a JWK set (RFC 7517, RFC 8037); a retired
    key carries `retired`: its retirement's signature (empty when it has none)."""
    found: list[Jwk] = [jwk_of(public_bytes(signing_key()))]
    for line in retired_lines():
        jwk = retired_jwk(line)
        if jwk["kid"] not in {key["kid"] for key in found}:
            found.append(jwk)
    return {"keys": found}


def retirement(public: str) -> str:
    """The line that keeps a retired key (its public half, base64url) for checking: the
    key and its retirement, signed with the current key."""
    signed = sign(retirement_body(public))
    return f"{public}.{signed['kid']}.{signed['value']}"


def sign_bytes(data: bytes) -> bytes:
    """An Ed25519 signature over `data` with the current key (a checkpoint's note)."""
    return signing_key().sign(data)


class Signature(TypedDict):
    """A detached signature: a receipt's, a retirement's."""

    alg: Literal["EdDSA"]
    kid: str
    value: str


def sign(body: object) -> Signature:
    """A detached Ed25519 signature over canonical(body), with the key's id."""
    return signature_of(canonical(body))


def signature_of(data: bytes) -> Signature:
    """A detached Ed25519 signature over `data` (a body already in canonical JSON), with
    the key's id."""
    key = signing_key()
    return {"alg": "EdDSA", "kid": kid_of(public_bytes(key)), "value": b64url(key.sign(data))}


@functools.lru_cache(maxsize=8)
def kid_of(public: bytes) -> str:
    """A public key's kid (its JWK thumbprint), worked out once per key."""
    return jwk_of(public)["kid"]


def rotatable() -> None:
    """KeyRefused unless the key is the embedded default's, in var/."""
    if magi_settings.MAGI_AUDIT_SIGNING_KEY:
        raise KeyRefused(
            "MAGI_AUDIT_SIGNING_KEY is set: rotate it there, and add the old key's public "
            "half (manage.py audit keys) to MAGI_AUDIT_RETIRED_KEYS"
        )


def rotate() -> tuple[str, str]:
    """A new embedded key in var/, the old one's public half kept in var/'s retired keys.
    Returns (old kid, new kid). Only for the embedded default: a deployment sets
    MAGI_AUDIT_SIGNING_KEY and MAGI_AUDIT_RETIRED_KEYS itself (docs/evidence.md)."""
    rotatable()
    old = signing_key()
    key_file().write_text(new_seed() + "\n")
    kept_tag_key.cache_clear()  # the file's time may not have moved (a coarse clock)
    with retired_file().open("a") as handle:
        handle.write(retirement(b64url(public_bytes(old))) + "\n")
    return jwk_of(public_bytes(old))["kid"], current_kid()
