"""Idempotent submits: POST /api/judgements/ with an Idempotency-Key header.

A client that times out and retries sends the same key again; it gets the judgement the
first request started instead of a second one (nine LLM calls paid twice). The key is
per user and stored with a hash of the body in the same transaction as the judgement,
under a unique constraint on (user, key), so two requests racing with one key start one
judgement whichever process serves them; the loser reads the winner's row.
"""

import hashlib
import json
from collections.abc import Mapping
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.utils import timezone

from judgements.core.errors import InvalidInput, MagiError
from judgements.models.access import IdempotencyKey
from judgements.models.magi_settings import magi_settings

HEADER = "Idempotency-Key"
MAX_LENGTH = 255


class KeyReused(MagiError):
    """The key was used before with a different body."""

    def __init__(self, key: str) -> None:
        self.message = (
            f"The {HEADER} {key!r} was already used with a different body. Send the same "
            "body to get the judgement it started, or use a new key for a new judgement."
        )
        super().__init__(self.message)


def key_from(headers: Mapping[str, str]) -> str | None:
    """The header's value, None without one; InvalidInput naming the header if unusable."""
    key = headers.get(HEADER)
    if key is None:
        return None
    if not key.strip():
        raise InvalidInput({HEADER: ["Must not be empty."]})
    if len(key) > MAX_LENGTH:
        raise InvalidInput({HEADER: [f"At most {MAX_LENGTH} characters, got {len(key)}."]})
    return key


def body_hash(body: object) -> str:
    """The same JSON, however it is spaced or its keys ordered, hashes the same."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def cutoff() -> datetime:
    return timezone.now() - timedelta(hours=magi_settings.MAGI_IDEMPOTENCY_HOURS)


def forget_expired(user: User | None) -> None:
    """An expired key may be used again: forget it (and the user's other expired keys, so
    the table does not grow without bound)."""
    IdempotencyKey.objects.filter(user=user, created_at__lt=cutoff()).delete()


def live_key(user: User | None, key: str) -> IdempotencyKey | None:
    return (
        IdempotencyKey.objects.select_related("judgement")
        .filter(user=user, key=key, created_at__gte=cutoff())
        .first()
    )
