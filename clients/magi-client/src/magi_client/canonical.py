"""Canonical JSON (RFC 8785, the JSON Canonicalization Scheme), its SHA-256, and a chain
entry's hash and link: the pure parts the server's audit chain (judgements/audit/) and the
client's `magi verify` share, so both hash the same bytes. No Django, no network.

An entry of the chain is the object

    {"seq": 7, "kind": "verdict", "subject": "judgement 12", "at": "2026-11-25T18:00:00.000001Z",
     "payload": {...}, "prev_sha256": "<hex of entry 6>"}

and its hash is the SHA-256 of that object's canonical JSON (docs/evidence.md).
"""

import hashlib
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, cast

import rfc8785

GENESIS_PREV = "0" * 64
ENTRY_FIELDS = ("seq", "kind", "subject", "at", "payload", "prev_sha256")


# The package types its argument as JSON values; ours are checked as it writes them (a
# TypedDict, say, is such a value but not a Mapping[str, value] to the type checker).
_dumps = cast(Callable[[object], bytes], rfc8785.dumps)


class NotCanonical(ValueError):
    """A value JSON cannot carry canonically (NaN, infinity, a key that is not a string,
    an integer beyond 2**53 that a double cannot hold)."""


def canonical(value: object) -> bytes:
    """The RFC 8785 form of `value` (the JSON Canonicalization Scheme, from the `rfc8785`
    package): no whitespace, object members sorted by their keys' UTF-16 code units,
    strings escaped minimally, numbers as ECMAScript prints them."""
    try:
        return _dumps(value)
    except rfc8785.CanonicalizationError as exc:
        raise NotCanonical(str(exc)) from None


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


def entry_body(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The hashed fields of an entry, as given (an entry may carry its own hash beside)."""
    missing = [name for name in ENTRY_FIELDS if name not in entry]
    if missing:
        raise NotCanonical(f"an entry needs {', '.join(missing)}")
    return {name: entry[name] for name in ENTRY_FIELDS}


def entry_sha256(entry: Mapping[str, Any]) -> str:
    return sha256_hex(canonical(entry_body(entry)))


def chain_problems(entries: Iterable[Mapping[str, Any]]) -> list[str]:
    """What is wrong with entries given with their `sha256`, in order of seq: an entry
    whose hash does not match its fields, and (for consecutive entries) one that does not
    name the one before it. Entries with gaps between them are each checked alone."""
    problems = []
    previous: Mapping[str, Any] | None = None
    for entry in entries:
        seq = entry.get("seq")
        try:
            if entry_sha256(entry) != entry.get("sha256"):
                problems.append(f"entry {seq}: its sha256 does not match its fields")
        except NotCanonical as exc:
            problems.append(f"entry {seq}: {exc}")
        before = None if previous is None else previous.get("seq")
        follows = isinstance(seq, int) and isinstance(before, int) and seq == before + 1
        if follows and previous is not None and entry.get("prev_sha256") != previous.get("sha256"):
            problems.append(f"entry {seq}: prev_sha256 does not name entry {before}")
        previous = entry
    return problems
