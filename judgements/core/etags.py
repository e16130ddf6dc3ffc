"""ETags of what is kept as configuration (panels, suites, budgets, teams), and the
refusal of a change made against an old one.

The ETag is `"<kind>-<id>-<version>-<hash>"`: the version counts the changes made through
MAGI's functions (judgements/configuration/versions.py); the hash of the object's configuration
changes the tag too when something was changed past them (the admin's raw form, SQL), so
a stale If-Match is never taken for a fresh one.
"""

import hashlib
import json

from judgements.core.errors import MagiError

ANY = "*"
HEADER = "If-Match"
REQUIRED = "Required: the ETag you read it with (its etag), or * to change whatever it is now."


class Stale(MagiError):
    """A change sent an If-Match that is not the object's ETag any more (HTTP 412)."""

    def __init__(self, kind: str, current: str | None) -> None:
        self.current = current
        now = f" (its ETag is now {current})" if current is not None else ""
        self.message = (
            f"The {kind} changed since you read it{now}: read it again and send its new "
            "ETag in If-Match."
        )
        super().__init__(self.message)


def etag(kind: str, pk: int, version: int, state: object) -> str:
    """The strong ETag of an object: its kind, id, version and a hash of `state` (its
    configuration as JSON)."""
    digest = hashlib.sha256(
        json.dumps(state, sort_keys=True, ensure_ascii=False, default=str).encode()
    ).hexdigest()[:8]
    return f'"{kind}-{pk}-{version}-{digest}"'


def matches(if_match: str, current: str) -> bool:
    """RFC 9110's strong comparison: `*`, or one of the listed tags equal to `current`.
    A weak tag (W/"...") never matches."""
    tags = [tag.strip() for tag in if_match.split(",")]
    return ANY in tags or current in tags


def check(if_match: str, kind: str, current: str) -> None:
    """Refuse (Stale) a change whose If-Match is not the object's current ETag."""
    if not matches(if_match, current):
        raise Stale(kind, current)
