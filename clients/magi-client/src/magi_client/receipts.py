"""Ed25519 signatures over canonical JSON, the public keys as a JWK set, and checking a
receipt or an evidence pack offline: what `magi verify` runs and what the server's
signer (judgements/audit/keys.py) produces. docs/evidence.md describes every field.

A signed document is `{"<name>": BODY, "signature": {"alg": "EdDSA", "kid": KID,
"value": BASE64URL}}` where the signature is Ed25519 over canonical(BODY).
"""

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from magi_client.canonical import (
    NotCanonical,
    canonical,
    chain_problems,
    sha256_hex,
    text_sha256,
)

RECEIPT_FORMAT = "magi-receipt/1"
PACK_FORMAT = "magi-evidence/1"
HEAD_FORMAT = "magi-chain-head/1"


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


def jwk_of(public: bytes) -> dict[str, str]:
    """A raw Ed25519 public key as a JWK (RFC 8037), its kid the RFC 7638 thumbprint."""
    x = b64url(public)
    thumbprint = b64url(
        bytes.fromhex(sha256_hex(canonical({"crv": "Ed25519", "kty": "OKP", "x": x})))
    )
    return {"kty": "OKP", "crv": "Ed25519", "x": x, "kid": thumbprint, "use": "sig", "alg": "EdDSA"}


def keys_of(jwks: Any) -> dict[str, Ed25519PublicKey]:
    """kid -> key of a JWK set's Ed25519 keys; NotValid when it is not a JWK set."""
    if not isinstance(jwks, Mapping) or not isinstance(jwks.get("keys"), list):
        raise NotValid('the keys are not a JWK set (an object with a "keys" list)')
    found = {}
    for key in jwks["keys"]:
        if not isinstance(key, Mapping) or key.get("kty") != "OKP" or key.get("crv") != "Ed25519":
            continue
        raw = unb64url(str(key.get("x", "")))
        if len(raw) != 32:
            raise NotValid(f"key {key.get('kid')!r}: an Ed25519 key is 32 bytes")
        # The kid is the key's thumbprint: a set cannot pass one key off under another's kid.
        if jwk_of(raw)["kid"] != key.get("kid"):
            raise NotValid(f"key {key.get('kid')!r}: its kid is not its thumbprint")
        found[str(key["kid"])] = Ed25519PublicKey.from_public_bytes(raw)
    return found


def check_signature(document: Mapping[str, Any], name: str, keys: Mapping[str, Any]) -> None:
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


def check_receipt(document: Any, keys: Mapping[str, Any], content: bytes | None = None) -> dict:
    """The receipt's body if `document` is a receipt signed by one of `keys` (and, given
    `content`, about exactly those bytes); NotValid naming what failed."""
    if not isinstance(document, Mapping) or not isinstance(document.get("receipt"), Mapping):
        raise NotValid('not a receipt: no "receipt" object')
    receipt = document["receipt"]
    if receipt.get("format") != RECEIPT_FORMAT:
        raise NotValid(f"unknown receipt format {receipt.get('format')!r}")
    check_signature(document, "receipt", keys)
    if content is not None and sha256_hex(content) != receipt.get("content_sha256"):
        raise NotValid(
            "the content's SHA-256 is not the receipt's content_sha256: it is not the "
            "content that was judged"
        )
    return dict(receipt)


def check_pack(pack: Any, keys: Mapping[str, Any], content: bytes | None = None) -> dict:
    """The receipt's body if `pack` is an evidence pack whose receipt checks, whose content
    is what the receipt names, whose chain entries hash right and hold the pack's own
    record (docs/evidence.md); NotValid naming the first thing that does not."""
    if not isinstance(pack, Mapping) or pack.get("format") != PACK_FORMAT:
        raise NotValid(f"not an evidence pack of format {PACK_FORMAT}")
    text = pack.get("content")
    if not isinstance(text, str):
        raise NotValid("the pack holds no content")
    receipt = check_receipt(pack.get("receipt"), keys, text.encode("utf-8"))
    if content is not None and sha256_hex(content) != receipt["content_sha256"]:
        raise NotValid("the content given is not the content the pack's receipt names")
    entries = pack.get("entries")
    if not isinstance(entries, list) or not all(isinstance(e, Mapping) for e in entries):
        raise NotValid("the pack's entries are not a list of entries")
    problems = chain_problems(entries)
    if problems:
        raise NotValid(problems[0])
    check_pack_record(pack, receipt, entries)
    check_heads(pack, keys)
    return receipt


def check_pack_record(pack: Mapping[str, Any], receipt: Mapping[str, Any], entries: list) -> None:
    """The entries name the receipt's place in the chain; the pack's content, criteria,
    decisions and review reason are the ones its entries hashed."""
    place = receipt.get("chain") or {}
    by_seq = {entry.get("seq"): entry for entry in entries}
    named = by_seq.get(place.get("seq"))
    if named is None or named.get("sha256") != place.get("entry_sha256"):
        raise NotValid("the pack's entries do not hold the entry the receipt names")
    payloads: dict[str, list[Mapping[str, Any]]] = {}
    for entry in entries:
        if isinstance(entry.get("payload"), Mapping):
            payloads.setdefault(str(entry.get("kind")), []).append(entry["payload"])
    for submitted in payloads.get("submitted", []):
        if submitted.get("content_sha256") != text_sha256(str(pack.get("content"))):
            raise NotValid("the pack's content is not the content its submitted entry hashed")
        criteria = [a.get("criteria_sha256") for a in submitted.get("agents") or []]
        held = [text_sha256(str(a.get("criteria"))) for a in pack.get("agents") or []]
        if criteria != held:
            raise NotValid("the pack's agents' criteria are not those its submitted entry hashed")
    hashed = {(p.get("agent"), p.get("round")): p for p in payloads.get("decision", [])}
    for agent in pack.get("agents") or []:
        for decision in agent.get("decisions") or []:
            where = f"agent {agent.get('position')}'s round {decision.get('round')}"
            entry = hashed.get((agent.get("position"), decision.get("round")))
            if entry is None:
                raise NotValid(f"no chain entry for {where}")
            same = entry.get("decision") == decision.get("decision")
            if not same or entry.get("reason_sha256") != text_sha256(str(decision.get("reason"))):
                raise NotValid(f"{where} in the pack is not what its chain entry hashed")
    review = pack.get("review")
    if isinstance(review, Mapping):
        said = payloads.get(str(review.get("kind")), [])
        if not said or said[-1].get("reason_sha256") != text_sha256(str(review.get("reason"))):
            raise NotValid("the pack's review is not the one its chain entry hashed")


def check_heads(pack: Mapping[str, Any], keys: Mapping[str, Any]) -> None:
    """Each signed head the pack holds signs one of its entries, with a key given."""
    hashes = {entry.get("seq"): entry.get("sha256") for entry in pack.get("entries") or []}
    for head in pack.get("head_signatures") or []:
        if not isinstance(head, Mapping) or hashes.get(head.get("seq")) != head.get("sha256"):
            raise NotValid("a signed head of the pack names no entry of the pack")
        document = {
            "head": {"format": HEAD_FORMAT, "seq": head.get("seq"), "sha256": head.get("sha256")},
            "signature": {"alg": "EdDSA", "kid": head.get("kid"), "value": head.get("value")},
        }
        check_signature(document, "head", keys)
