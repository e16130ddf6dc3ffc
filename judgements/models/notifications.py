"""Telling reviewers that a verdict waits for them: each person's choice (on or off, one
message per judgement or a digest), and one row per (judgement, reviewer) to tell, kept
until sent (judgements/outcome/notifications.py sends them)."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from judgements.models.choices import ids_from_one
from judgements.models.leases import Leased, LeaseQuerySet
from judgements.models.states import Move, StateGraph


class NotificationChoice(models.Model):
    """A person's own notification settings; without a row: on, one message a judgement."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_choice"
    )
    enabled = models.BooleanField(default=True)
    # 0: a message per judgement as it comes; N: at most one message every N minutes.
    digest_minutes = models.PositiveIntegerField(default=0)
    last_digest_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        state = "off" if not self.enabled else f"digest {self.digest_minutes} min"
        return f"notifications of {self.user}: {state}"


class NotificationStatus(models.TextChoices):
    UNSENT = "unsent", "Unsent"
    SENT = "sent", "Sent"


class NotificationStates(StateGraph):
    """An email's states and moves (outcome/notifications.py `settle`, after each send):
    sent (or nobody to send it to), else tried again at the next sweep with its error."""

    states, initial = NotificationStatus, NotificationStatus.UNSENT
    send = Move((NotificationStatus.UNSENT,), (NotificationStatus.SENT,))
    retry = Move((NotificationStatus.UNSENT,), (NotificationStatus.UNSENT,))


class NotificationQuerySet(LeaseQuerySet["Notification"]):
    def unsent(self) -> "NotificationQuerySet":
        return self.filter(status=NotificationStatus.UNSENT)


class Notification(Leased):
    """One reviewer to tell about one judgement; sent once, retried while it fails. The
    worker sending it holds its lease (Leased, models/leases.py): the email goes out with
    no database lock held, no other worker sends it meanwhile, and a dead worker's rows
    are sent by another once its lease runs out."""

    judgement = models.ForeignKey(
        "judgements.Judgement", on_delete=models.CASCADE, related_name="notifications"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    created_at = models.DateTimeField(default=timezone.now)
    status = NotificationStates.column()
    # When it was sent (or found to have nobody to go to): set with the status "sent".
    sent_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)

    objects = NotificationQuerySet.as_manager()

    class Meta:
        constraints = [
            ids_from_one("notification_id_from_one"),
            models.UniqueConstraint(fields=["judgement", "user"], name="notification_once_each"),
        ]
        indexes = [models.Index(fields=["user", "sent_at"], name="notification_user_sent_idx")]

    def __str__(self) -> str:
        return f"judgement {self.judgement_id} to {self.user}"
