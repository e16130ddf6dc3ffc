"""What follows a verdict: a person's override or confirmation, and signed webhooks."""

import base64
import secrets
from datetime import datetime
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.utils import timezone

from judgements.models.choices import DECISION_OF_STATUS, Decision, Status, ids_from_one
from judgements.models.leases import Leased, LeaseQuerySet
from judgements.models.states import Move, StateGraph

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# As `marks`: a judgement's `contested` field would shadow the module in its class body.


class Override(models.Model):
    """A human's verdict over the panel's, with the reason: the audit of who overrode what.
    One per judgement (a second is refused); never edited or deleted (outcome/overrides.py)."""

    judgement = models.OneToOneField(
        "judgements.Judgement", on_delete=models.CASCADE, related_name="override"
    )
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="overrides"
    )
    at = models.DateTimeField(default=timezone.now)
    # What the panel had decided when it was overridden, and the decision put in force.
    panel_status = models.CharField(max_length=16, choices=Status.choices)
    decision = models.CharField(max_length=8, choices=Decision.choices)
    reason = models.TextField()

    class Meta:
        ordering = ["-at"]
        constraints = [
            ids_from_one("override_id_from_one"),
            models.CheckConstraint(
                condition=models.Q(decision__in=Decision.values),
                name="override_is_approve_or_reject",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.judgement_id}: {self.panel_status} -> {self.decision} by {self.by}"

    @property
    def verdict(self) -> str:
        return Status.APPROVED if self.decision == Decision.APPROVE else Status.REJECTED


class Confirmation(models.Model):
    """A person's review that keeps the panel's verdict, with the reason: audited like an
    override (who, when, why), one per judgement, never edited (judgements/outcome/reviews.py)."""

    judgement = models.OneToOneField(
        "judgements.Judgement", on_delete=models.CASCADE, related_name="confirmation"
    )
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="confirmations"
    )
    at = models.DateTimeField(default=timezone.now)
    panel_status = models.CharField(max_length=16, choices=Status.choices)
    reason = models.TextField()

    class Meta:
        constraints = [ids_from_one("confirmation_id_from_one")]
        ordering = ["-at"]

    def __str__(self) -> str:
        return f"{self.judgement_id}: {self.panel_status} confirmed by {self.by}"

    @property
    def decision(self) -> str:
        # Only an approved or rejected verdict can be confirmed (judgements/outcome/reviews.py).
        return DECISION_OF_STATUS[self.panel_status]

    def get_decision_display(self) -> str:
        return Decision(self.decision).label


class WebhookSecret(models.Model):
    """A user's key for signing webhooks (Standard Webhooks: `whsec_` + base64 of 32
    random bytes). Kept in clear, as HMAC needs it; shown once by `manage.py
    webhook_secret`, replaced by its --rotate."""

    PREFIX = "whsec_"

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhook_secret"
    )
    secret = models.CharField(max_length=100)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"webhook secret of {self.user} ({self.created_at:%Y-%m-%d})"

    @classmethod
    def new_secret(cls) -> str:
        return cls.PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()

    @classmethod
    def issue(cls, user: "User") -> str:
        """A new secret for the user, replacing any earlier one; returned once."""
        secret = cls.new_secret()
        cls.objects.update_or_create(
            user=user, defaults={"secret": secret, "created_at": timezone.now()}
        )
        return secret

    def key(self) -> bytes:
        """The bytes the HMAC is keyed with: the secret's base64 part, decoded."""
        return base64.b64decode(self.secret.removeprefix(self.PREFIX))


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"


class DeliveryStates(StateGraph):
    """A delivery's states and moves (outcome/webhooks.py `settle`, after each attempt):
    delivered on a 2xx, given up when out of attempts, else retried after its backoff."""

    states, initial = DeliveryStatus, DeliveryStatus.PENDING
    deliver = Move((DeliveryStatus.PENDING,), (DeliveryStatus.DELIVERED,))
    give_up = Move((DeliveryStatus.PENDING,), (DeliveryStatus.FAILED,))
    retry = Move((DeliveryStatus.PENDING,), (DeliveryStatus.PENDING,))


class WebhookDeliveryQuerySet(LeaseQuerySet["WebhookDelivery"]):
    def due(self, now: datetime) -> "WebhookDeliveryQuerySet":
        """Pending, its backoff over, and nobody holding it (a dead worker's lease ran out)."""
        return self.free(now).filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now)


class WebhookDelivery(Leased):
    """One event to POST to a judgement's callback_url, stored in the transaction that
    changed the judgement, retried until delivered or out of attempts. Its id is the
    `webhook-id` header, the same on every attempt so a receiver can drop duplicates.
    The worker posting it holds its lease (Leased, models/leases.py), like a judgement's."""

    # None: an event of the audit log's (a checkpoint), sent to its subscribers.
    judgement = models.ForeignKey(
        "judgements.Judgement",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="webhook_deliveries",
    )
    event = models.CharField(max_length=40)
    url = models.CharField(max_length=2000)
    payload = models.JSONField()
    status = DeliveryStates.column()
    attempt_count = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = WebhookDeliveryQuerySet.as_manager()

    class Meta:
        constraints = [ids_from_one("webhook_delivery_id_from_one")]
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "webhook deliveries"
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="delivery_due_idx"),
        ]

    def __str__(self) -> str:
        return f"msg_{self.pk} {self.event} for judgement {self.judgement_id}: {self.status}"

    @property
    def webhook_id(self) -> str:
        return f"msg_{self.pk}"


class WebhookAttempt(models.Model):
    """One POST of a delivery, as it went: for the admin's audit."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempts")
    number = models.PositiveSmallIntegerField()
    worker = models.CharField(max_length=100, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)

    class Meta:
        constraints = [ids_from_one("webhook_attempt_id_from_one")]
        ordering = ["delivery", "number", "id"]

    def __str__(self) -> str:
        return f"{self.delivery.webhook_id} attempt {self.number}: {self.status_code or self.error}"
