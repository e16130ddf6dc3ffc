"""Ed25519 signatures over canonical JSON, the public keys as a JWK set (and which of
them a checker trusts), and checking a receipt offline with its inclusion proof: what
`magi verify` runs and what the server's signer (judgements/audit/keys.py) produces.
docs/evidence.md describes every field; magi_client/packs.py checks a whole pack.

A signed document is `{"<name>": BODY, "signature": {"alg": "EdDSA", "kid": KID,
"value": BASE64URL}}` where the signature is Ed25519 over canonical(BODY). A receipt
also carries `inclusion`: the checkpoint it was proven against and its inclusion proof.
"""

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from magi_client import checkpoints, merkle
from magi_client.canonical import NotCanonical, canonical, sha256_hex
from magi_client.json_values import JsonObject, JsonValue

RECEIPT_FORMAT = "magi-receipt/2"
PACK_FORMAT = "magi-evidence/2"
RETIREMENT_FORMAT = "magi-key-retired/1"
CURRENT_FORMAT = "magi-current/1"


class Jwk(TypedDict):
    kty: str
    crv: str
    x: str
    kid: str
    use: str
    alg: str


class Retirement(TypedDict, total=False):
    kid: str  # the key that signed the retirement
    value: str  # its signature over retirement_body(x), base64url


class RetiredJwk(Jwk):
    retired: Retirement


class NotValid(Exception):
    """What failed, in words: the receipt or pack must not be relied on."""


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise NotValid(f"not base64url: {exc}") from None
    # One text per value: unused low bits of the last character would let a changed
    # signature read as the same bytes.
    if b64url(raw) != text:
        raise NotValid("not canonical base64url (no padding, unused bits zero)")
    return raw


def jwk_of(public: bytes) -> Jwk:
    """A raw Ed25519 public key as a JWK (RFC 8037), its kid the RFC 7638 thumbprint."""
    x = b64url(public)
    thumbprint = b64url(
        bytes.fromhex(sha256_hex(canonical({"crv": "Ed25519", "kty": "OKP", "x": x})))
    )
    return {"kty": "OKP", "crv": "Ed25519", "x": x, "kid": thumbprint, "use": "sig", "alg": "EdDSA"}


def retirement_body(public: str) -> dict[str, str]:
    """What a retirement signs: that the key with this public half (base64url) signed for
    MAGI until it was retired, so what it signed still checks."""
    return {"format": RETIREMENT_FORMAT, "x": public}


@dataclass
class TrustedKeys:
    """The keys a checker trusts (kid -> key), and the retired keys it does not, with why."""

    keys: dict[str, Ed25519PublicKey] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)


def trusted_keys(jwks: object) -> TrustedKeys:
    """The Ed25519 keys of a JWK set the checker trusts: every key it gave that is not
    marked retired, and each retired key whose retirement a trusted key signed (so a key
    added beside the data, without a trusted key's signature, is not trusted). NotValid
    when it is not a JWK set."""
    if not isinstance(jwks, Mapping) or not isinstance(jwks.get("keys"), list):
        raise NotValid('the keys are not a JWK set (an object with a "keys" list)')
    trusted = TrustedKeys()
    retired: dict[str, tuple[Ed25519PublicKey, str, JsonValue]] = {}
    for key in jwks["keys"]:
        if not isinstance(key, Mapping) or key.get("kty") != "OKP" or key.get("crv") != "Ed25519":
            continue
        raw = unb64url(str(key.get("x", "")))
        if len(raw) != 32:
            raise NotValid(f"key {key.get('kid')!r}: an Ed25519 key is 32 bytes")
        # The kid is the key's thumbprint: a set cannot pass one key off under another's kid.
        if jwk_of(raw)["kid"] != key.get("kid"):
            raise NotValid(f"key {key.get('kid')!r}: its kid is not its thumbprint")
        public = Ed25519PublicKey.from_public_bytes(raw)
        if "retired" in key:
            retired[str(key["kid"])] = (public, str(key["x"]), key["retired"])
        else:
            trusted.keys[str(key["kid"])] = public
    while True:
        found = {
            kid: public
            for kid, (public, x, signature) in retired.items()
            if retirement_checks(x, signature, trusted.keys)
        }
        if not found:
            break
        trusted.keys.update(found)
        retired = {kid: value for kid, value in retired.items() if kid not in found}
    trusted.refused = [
        f"retired key {kid}: its retirement is not signed by a key trusted here" for kid in retired
    ]
    return trusted


def retirement_checks(x: str, signature: JsonValue, keys: Mapping[str, Ed25519PublicKey]) -> bool:
    if not isinstance(signature, Mapping):
        return False
    document = {
        "retirement": retirement_body(x),
        "signature": {"alg": "EdDSA", "kid": signature.get("kid"), "value": signature.get("value")},
    }
    try:
        check_signature(document, "retirement", keys)
    except NotValid:
        return False
    return True


def keys_of(jwks: object) -> dict[str, Ed25519PublicKey]:
    """kid -> key of the keys of a JWK set the checker trusts (trusted_keys)."""
    return trusted_keys(jwks).keys


def check_signature(
    document: Mapping[str, object], name: str, keys: Mapping[str, Ed25519PublicKey]
) -> None:
    """NotValid unless document["signature"] is a good Ed25519 signature over
    canonical(document[name]) by a key of `keys` (from keys_of)."""
    signature = document.get("signature")
    if not isinstance(signature, Mapping):
        raise NotValid(f"the {name} carries no signature")
    if signature.get("alg") != "EdDSA":
        raise NotValid(f"the {name}'s signature is not EdDSA")
    kid = str(signature.get("kid"))
    if kid not in keys:
        raise NotValid(f"the {name} was signed by key {kid!r}, which is not among the keys given")
    try:
        body = canonical(document.get(name))
        keys[kid].verify(unb64url(str(signature.get("value", ""))), body)
    except (InvalidSignature, NotCanonical, NotValid):
        raise NotValid(
            f"the {name}'s signature does not match its contents (kid {kid}): it was changed "
            "after it was signed, or signed with another key"
        ) from None


def hex_hash(value: JsonValue, what: str) -> bytes:
    if not isinstance(value, str) or len(value) != 64:
        raise NotValid(f"{what} is not a SHA-256 in hex")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise NotValid(f"{what} is not a SHA-256 in hex") from None


def check_inclusion(
    inclusion: JsonValue, leaf: str, keys: Mapping[str, Ed25519PublicKey]
) -> tuple[checkpoints.Checkpoint, int]:
    """The checkpoint an inclusion proof proves `leaf` (a leaf hash, hex) in, and its
    index; NotValid naming what failed."""
    if not isinstance(inclusion, Mapping) or not isinstance(hashes := inclusion.get("proof"), list):
        raise NotValid("the inclusion is not {checkpoint, index, proof}")
    try:
        checkpoint = checkpoints.checked(str(inclusion.get("checkpoint")), keys)
    except checkpoints.BadCheckpoint as exc:
        raise NotValid(f"its checkpoint: {exc}") from None
    index = inclusion.get("index")
    if not isinstance(index, int) or isinstance(index, bool):
        raise NotValid("the inclusion's index is not a number")
    proof = [hex_hash(item, "a hash of the inclusion proof") for item in hashes]
    try:
        merkle.check_inclusion(
            hex_hash(leaf, "the leaf hash"), index, checkpoint.size, proof, checkpoint.root
        )
    except merkle.ProofFailed as exc:
        raise NotValid(f"the inclusion proof does not hold: {exc}") from None
    return checkpoint, index


@dataclass(frozen=True)
class CheckedReceipt:
    # As signed, its fields as docs/evidence.md says. Any: the server's receipt body
    # (judgements/audit/receipts.py) has no named shape the client can import yet.
    body: dict[str, Any]
    checkpoint: checkpoints.Checkpoint | None  # None: not yet in a checkpoint
    index: int | None
    # The signed statement of what the log held about the judgement at the checkpoint.
    statement: JsonObject | None = None


def check_receipt(
    document: object, keys: Mapping[str, Ed25519PublicKey], content: bytes | None = None
) -> CheckedReceipt:
    """The receipt if `document` is a receipt signed by one of `keys` (and, given
    `content`, about exactly those bytes), with its inclusion proof checked when it
    carries one; NotValid naming what failed."""
    if not isinstance(document, Mapping) or not isinstance(
        receipt := document.get("receipt"), Mapping
    ):
        raise NotValid('not a receipt: no "receipt" object')
    if receipt.get("format") == "magi-receipt/1":
        raise NotValid(
            "a receipt of format magi-receipt/1 was signed when it was read, from whatever "
            "the database said then: it is not evidence (docs/evidence.md)"
        )
    if receipt.get("format") != RECEIPT_FORMAT:
        raise NotValid(f"unknown receipt format {receipt.get('format')!r}")
    check_signature(document, "receipt", keys)
    if content is not None and sha256_hex(content) != receipt.get("content_sha256"):
        raise NotValid(
            "the content's SHA-256 is not the receipt's content_sha256: it is not the "
            "content that was judged"
        )
    entry = receipt.get("entry")
    if not isinstance(entry, Mapping):
        raise NotValid("the receipt names no log entry")
    if document.get("inclusion") is None:
        return CheckedReceipt(dict(receipt), None, None)
    checkpoint, index = check_inclusion(document["inclusion"], str(entry.get("leaf_hash")), keys)
    statement = check_current(document.get("current"), receipt, checkpoint, keys)
    return CheckedReceipt(dict(receipt), checkpoint, index, statement)


def check_current(
    current: JsonValue,
    receipt: Mapping[str, JsonValue],
    checkpoint: checkpoints.Checkpoint,
    keys: Mapping[str, Ed25519PublicKey],
) -> JsonObject:
    """The statement served beside a receipt proven at `checkpoint`: signed by a trusted
    key, about this judgement at that size, naming the receipt's entry as the latest
    that put a verdict in force. A receipt proven at a size where a later override or
    confirmation was in force is stale (as a Sigstore bundle against a newer checkpoint)."""
    if not isinstance(current, Mapping) or not isinstance(
        statement := current.get("statement"), Mapping
    ):
        raise NotValid(
            "it carries no signed statement that it was the judgement's latest receipt at "
            f"its checkpoint (size {checkpoint.size}): it may be stale; fetch it again"
        )
    check_signature(current, "statement", keys)
    if statement.get("format") != CURRENT_FORMAT:
        raise NotValid(f"unknown statement format {statement.get('format')!r}")
    if [statement.get("judgement"), statement.get("size")] != [
        receipt.get("judgement"),
        checkpoint.size,
    ]:
        raise NotValid(
            f"its statement is of judgement {statement.get('judgement')} at size "
            f"{statement.get('size')}, not of judgement {receipt.get('judgement')} at its "
            f"checkpoint's size {checkpoint.size}"
        )
    entry = receipt.get("entry")
    if statement.get("in_force") != (
        entry.get("leaf_hash") if isinstance(entry, Mapping) else None
    ):
        raise NotValid(
            f"stale: by the log at size {checkpoint.size} a later entry about judgement "
            f"{receipt.get('judgement')} (an override or a confirmation) put another verdict "
            "in force; fetch its receipt again"
        )
    return dict(statement)
