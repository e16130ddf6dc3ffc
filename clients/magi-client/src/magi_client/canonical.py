"""Canonical JSON (RFC 8785, from the `rfc8785` package), the one normalisation of the
content MAGI judges, and the audit log's entries as leaves: the pure parts the server's
log (judgements/audit/) and the client's `magi verify` share, so both hash the same bytes.
No Django, no network.

An entry of the log is the leaf

    {"format": "magi-entry/1", "kind": "verdict", "subject": "judgement 12",
     "judgement": 12, "at": "2026-11-25T18:00:00.000001Z", "payload": {...}}

whose canonical JSON is hashed as RFC 9162 hashes a leaf (magi_client/merkle.py).
An entry carried over from the hash chain before issue 55 is the leaf
{"seq", "kind", "subject", "at", "payload", "prev_sha256"} it was then (docs/evidence.md).
"""

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import cast

import rfc8785

ENTRY_FORMAT = "magi-entry/1"
ENTRY_FIELDS = ("format", "kind", "subject", "judgement", "at", "payload")
# An entry of the hash chain before issue 55, carried into the log as it was.
CHAIN_FIELDS = ("seq", "kind", "subject", "at", "payload", "prev_sha256")


# The package types its argument as JSON values; ours are checked as it writes them (a
# TypedDict, say, is such a value but not a Mapping[str, value] to the type checker).
_dumps = cast(Callable[[object], bytes], rfc8785.dumps)


class NotCanonical(ValueError):
    """A value JSON cannot carry canonically (NaN, infinity, a key that is not a string,
    an integer beyond 2**53 that a double cannot hold)."""


def canonical(value: object) -> bytes:
    """The RFC 8785 form of `value` (the JSON Canonicalization Scheme): no whitespace,
    object members sorted by their keys' UTF-16 code units, strings escaped minimally,
    numbers as ECMAScript prints them.

    The `rfc8785` package is the reference; it writes a long prompt one escaped character
    at a time through a Python callback, a sixth of the engine's CPU (docs/benchmarks.md).
    So strings go through the standard library's C escaper (whose escapes are RFC 8785's)
    and numbers through the package; tests/magi_client/test_canonical.py holds the bytes
    equal to the package's on generated values. What cannot be written canonically (NaN,
    an integer beyond 2**53, a lone surrogate, a key that is not a string) the package
    refuses, naming it."""
    try:
        if type(value) is str:  # a leaf's fields: the commonest call, made short
            return _string(value).encode("utf-8")
        parts: list[str] = []
        _write(value, parts)
        return "".join(parts).encode("utf-8")
    except (_Refused, UnicodeEncodeError):
        pass
    try:
        return _dumps(value)
    except rfc8785.CanonicalizationError as exc:
        raise NotCanonical(str(exc)) from None


class _Refused(Exception):
    """Not for the fast writer: the package decides."""


_INT_LIMIT = 2**53 - 1
_string = json.encoder.encode_basestring


def _write(value: object, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(_string(value))
    elif value is None or isinstance(value, bool):
        out.append("null" if value is None else "true" if value else "false")
    elif isinstance(value, int):
        if not -_INT_LIMIT <= value <= _INT_LIMIT:
            raise _Refused
        out.append(str(value))
    elif isinstance(value, float):
        out.append(_dumps(value).decode("ascii"))
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for number, item in enumerate(value):
            if number:
                out.append(",")
            _write(item, out)
        out.append("]")
    elif isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise _Refused
        out.append("{")
        for number, key in enumerate(sorted(value, key=lambda key: key.encode("utf-16-be"))):
            out.append("," if number else "")
            out.append(_string(key))
            out.append(":")
            _write(value[key], out)
        out.append("}")
    else:
        raise _Refused


def stored_content(text: str) -> str:
    """A text as MAGI stores it: the white space around it dropped (str.strip), nothing
    else changed. The one normalisation of what is judged: the server applies it to every
    text it takes (judgements/intake/schemas.py, Django's forms do the same), and `magi
    gate` and `magi verify --content` to what they read, so a pipeline's bytes (git log's
    trailing newline, a CRLF at the end) hash as the server stored them."""
    return text.strip()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def text_sha256(text: str) -> str:
    """The SHA-256 of a text as UTF-8: how a content, a criteria or a reason is hashed."""
    return sha256_hex(text.encode("utf-8"))


def timestamp(moment: datetime) -> str:
    """A time as entries and receipts write it: UTC, microseconds, a Z."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def entry_leaf(
    kind: str, subject: str, judgement: int | None, at: str, payload: Mapping[str, object]
) -> dict[str, object]:
    """An entry as its leaf: the object whose canonical JSON the log hashes."""
    return {
        "format": ENTRY_FORMAT,
        "kind": kind,
        "subject": subject,
        "judgement": judgement,
        "at": at,
        "payload": dict(payload),
    }


def is_chain_leaf(leaf: Mapping[str, object]) -> bool:
    """An entry of the old hash chain (no format, a prev_sha256)."""
    return "format" not in leaf and "prev_sha256" in leaf


def leaf_fields(leaf: Mapping[str, object]) -> dict[str, object]:
    """The hashed fields of a leaf as given; NotCanonical when one is missing."""
    names = CHAIN_FIELDS if is_chain_leaf(leaf) else ENTRY_FIELDS
    missing = [name for name in names if name not in leaf]
    if missing or (not is_chain_leaf(leaf) and leaf.get("format") != ENTRY_FORMAT):
        raise NotCanonical(f"not a log entry of format {ENTRY_FORMAT}: it needs {', '.join(names)}")
    return {name: leaf[name] for name in names}


def leaf_hash(leaf: Mapping[str, object]) -> str:
    """An entry's leaf hash, hex: SHA-256(0x00 || canonical(leaf))."""
    return hashlib.sha256(b"\x00" + canonical(leaf_fields(leaf))).hexdigest()


def entry_leaf_hash(
    kind: str, subject: str, judgement: int | None, at: str, payload_json: str
) -> str:
    """entry_leaf's hash from its payload already in canonical JSON: the same bytes,
    composed in RFC 8785's order of the leaf's keys, without writing the payload twice."""
    data = b"".join(
        [
            b'{"at":', canonical(at), b',"format":', canonical(ENTRY_FORMAT),
            b',"judgement":', canonical(judgement), b',"kind":', canonical(kind),
            b',"payload":', payload_json.encode("utf-8"), b',"subject":', canonical(subject), b"}",
        ]
    )  # fmt: skip
    return hashlib.sha256(b"\x00" + data).hexdigest()


def record_sha256(leaf_hashes: Iterable[str]) -> str:
    """What a receipt says of the entries about its judgement before it: the SHA-256 of
    their leaf hashes, sorted, as bytes one after another (in no order of time, so
    entries written at once by the engine's threads give one answer)."""
    return sha256_hex(b"".join(sorted(bytes.fromhex(value) for value in leaf_hashes)))


def call_sha256(call: Mapping[str, object]) -> str:
    """A model call as the evidence pack shows it (an attempt's or a check's fields),
    hashed whole: what the log holds of every prompt and reply."""
    return sha256_hex(canonical(dict(call)))
