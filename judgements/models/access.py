"""How programs reach MAGI: API tokens and the idempotency keys of their submits."""

import hashlib
import secrets
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.utils import timezone

from judgements.models.choices import ids_from_one, is_id

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class ApiToken(models.Model):
    """A bearer token for programs that call the HTTP API. Only a hash is stored."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    team = models.ForeignKey(
        "judgements.Team",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="api_tokens",
        help_text="The judgements it starts belong to this team.",
    )
    prefix = models.CharField(max_length=8, help_text="The first characters, to tell tokens apart.")
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    # Revoked tokens stay, so the judgements they started keep saying which it was.
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [ids_from_one("api_token_id_from_one")]
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "-created_at"], name="apitoken_user_created_idx")]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…) for {self.user}"

    @staticmethod
    def hash(key: str) -> str:
        return hashlib.sha256(key.encode()).hexdigest()

    @classmethod
    def issue(cls, user: "User", name: str) -> tuple["ApiToken", str]:
        """Create a token; the key is returned once and never stored."""
        key = "magi_" + secrets.token_urlsafe(32)
        token = cls.objects.create(user=user, name=name, prefix=key[5:13], key_hash=cls.hash(key))
        return token, key

    def revoke(self) -> bool:
        """Stop the token working from now on. False if it was revoked before."""
        self.revoked_at = timezone.now()
        return bool(
            ApiToken.objects.filter(pk=self.pk, revoked_at__isnull=True).update(
                revoked_at=self.revoked_at
            )
        )

    @classmethod
    def active(cls, key: str) -> "ApiToken | None":
        """The token with this key, if its user may still sign in; notes its use. Never
        a user whose id is below 1: no way of MAGI's or Django's makes one, so it was
        written into the database (`manage.py audit verify` names it)."""
        token = cls.objects.select_related("user").filter(key_hash=cls.hash(key)).first()
        if token is None or token.revoked_at is not None or not token.user.is_active:
            return None
        if not is_id(token.user_id):
            return None
        now = timezone.now()
        # At most one write a minute: a burst of requests must not queue on the write lock.
        if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
            cls.objects.filter(pk=token.pk).update(last_used_at=now)
        return token


LAST_USED_RESOLUTION = timedelta(minutes=1)


class IdempotencyKey(models.Model):
    """A client's Idempotency-Key on POST /api/judgements/: the same key and body from the
    same user answer with the judgement it started (judgements/intake/idempotency.py). The unique
    constraint, not any process's memory, makes two concurrent requests start one."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="idempotency_keys"
    )
    key = models.CharField(max_length=255)
    body_hash = models.CharField(max_length=64, help_text="SHA-256 of the canonical JSON body.")
    judgement = models.ForeignKey(
        "judgements.Judgement", on_delete=models.CASCADE, related_name="idempotency_keys"
    )
    status_code = models.PositiveSmallIntegerField(default=201)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            ids_from_one("idempotency_key_id_from_one"),
            models.UniqueConstraint(fields=["user", "key"], name="idempotency_unique_user_key"),
        ]
        indexes = [models.Index(fields=["created_at"], name="idempotency_created_idx")]

    def __str__(self) -> str:
        return f"{self.key!r} of {self.user_id} -> judgement {self.judgement_id}"


class BatchPart(models.Model):
    """Operations of a configuration batch sent ahead of it (POST /api/batch/parts/): a
    batch larger than one request body (MAGI_MAX_BODY_BYTES) arrives as parts, then the
    batch that names them runs them all in one transaction, so it stays all or nothing.
    The batch that names a part consumes it, whatever its outcome; a part never named is
    dropped after PART_LIFETIME."""

    PART_LIFETIME = timedelta(hours=1)

    key = models.CharField(max_length=43, unique=True, default=secrets.token_urlsafe)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="batch_parts"
    )
    operations = models.JSONField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [ids_from_one("batch_part_id_from_one")]
        indexes = [models.Index(fields=["created_at"], name="batchpart_created_idx")]

    def __str__(self) -> str:
        return f"batch part {self.key[:8]} ({len(self.operations)} operations)"
