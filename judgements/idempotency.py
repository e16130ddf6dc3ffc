"""Idempotent submits: POST /api/judgements/ with an Idempotency-Key header.

A client that times out and retries sends the same key again; it gets the judgement the
first request started instead of a second one (nine LLM calls paid twice). The key is
per user and stored with a hash of the body in the same transaction as the judgement,
under a unique constraint on (user, key), so two requests racing with one key start one
judgement whichever process serves them; the loser reads the winner's row.
"""

import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from judgements import limits
from judgements.errors import MagiError
from judgements.forms import CaseError
from judgements.models import ApiToken, IdempotencyKey, Judgement

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


@dataclass(frozen=True)
class Submitted:
    judgement: Judgement
    status_code: int
    replayed: bool


def key_from(headers) -> str | None:
    """The header's value, None without one; CaseError naming the header if unusable."""
    key = headers.get(HEADER)
    if key is None:
        return None
    if not key.strip():
        raise CaseError({HEADER: ["Must not be empty."]})
    if len(key) > MAX_LENGTH:
        raise CaseError({HEADER: [f"At most {MAX_LENGTH} characters, got {len(key)}."]})
    return key


def body_hash(body) -> str:
    """The same JSON, however it is spaced or its keys ordered, hashes the same."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def cutoff():
    return timezone.now() - timedelta(hours=settings.MAGI_IDEMPOTENCY_HOURS)


def submit(case: dict, body, user, token: ApiToken | None, key: str) -> Submitted:
    """Start the judgement for `case` once per (user, key); raises KeyReused or
    limits.Refused. A replay is never refused by a rate limit: it starts nothing."""
    digest = body_hash(body)
    try:
        with transaction.atomic():
            # The same lock limits.create_judgement takes: one user's submits go one at a
            # time, so the look-up below sees any key stored by a request that went first.
            get_user_model().objects.select_for_update().filter(pk=user.pk).first()
            stored = live_key(user, key)
            if stored is not None:
                return replay(stored, digest, key)
            # An expired key may be used again: forget it (and the user's other expired
            # keys, so the table does not grow without bound).
            IdempotencyKey.objects.filter(user=user, created_at__lt=cutoff()).delete()
            limits.check(user, token)
            judgement = Judgement.create_with_agents(case, user, api_token=token)
            IdempotencyKey.objects.create(
                user=user, key=key, body_hash=digest, judgement=judgement, status_code=201
            )
            return Submitted(judgement, 201, replayed=False)
    except IntegrityError:
        # A concurrent request stored the key first (a database without row locks): the
        # judgement above was rolled back with the key; answer with the winner's.
        stored = live_key(user, key)
        if stored is None:
            raise
        return replay(stored, digest, key)


def live_key(user, key: str) -> IdempotencyKey | None:
    return (
        IdempotencyKey.objects.select_related("judgement")
        .filter(user=user, key=key, created_at__gte=cutoff())
        .first()
    )


def replay(stored: IdempotencyKey, digest: str, key: str) -> Submitted:
    if stored.body_hash != digest:
        raise KeyReused(key)
    return Submitted(stored.judgement, stored.status_code, replayed=True)
