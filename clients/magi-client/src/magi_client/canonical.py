"""Canonical JSON (RFC 8785, the JSON Canonicalization Scheme), its SHA-256, and a chain
entry's hash and link: the pure parts the server's audit chain (judgements/audit/) and the
client's `magi verify` share, so both hash the same bytes. No Django, no network.

An entry of the chain is the object

    {"seq": 7, "kind": "verdict", "subject": "judgement 12", "at": "2026-11-25T18:00:00.000001Z",
     "payload": {...}, "prev_sha256": "<hex of entry 6>"}

and its hash is the SHA-256 of that object's canonical JSON (docs/evidence.md).
"""

import hashlib
import math
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

GENESIS_PREV = "0" * 64
ENTRY_FIELDS = ("seq", "kind", "subject", "at", "payload", "prev_sha256")

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


class NotCanonical(ValueError):
    """A value JSON cannot carry canonically (NaN, infinity, a key that is not a string)."""


def canonical(value: Any) -> bytes:
    """The RFC 8785 form of `value`: no whitespace, object members sorted by their keys'
    UTF-16 code units, strings escaped minimally, numbers as ECMAScript prints them."""
    return _serialise(value).encode("utf-8")


def _serialise(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping):
        for key in value:
            if not isinstance(key, str):
                raise NotCanonical(f"an object key must be a string, not {key!r}")
        keys = sorted(value, key=lambda key: key.encode("utf-16-be"))
        return "{" + ",".join(f"{_string(k)}:{_serialise(value[k])}" for k in keys) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(_serialise(item) for item in value) + "]"
    raise NotCanonical(f"not a JSON value: {type(value).__name__}")


def _string(text: str) -> str:
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _number(number: float) -> str:
    """ECMAScript's Number.prototype.toString: the shortest digits that read back the
    same (Python's repr finds them), laid out as ECMAScript lays them out."""
    if math.isnan(number) or math.isinf(number):
        raise NotCanonical("NaN and infinity have no JSON form")
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    mantissa, _, exponent = repr(abs(number)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    written = whole + fraction
    digits = written.lstrip("0")
    # The value is 0.DIGITS times ten to the power `point`.
    point = len(whole) + (int(exponent) if exponent else 0) - (len(written) - len(digits))
    digits = digits.rstrip("0") or "0"
    n, k = point, len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    shown = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{shown}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"


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
