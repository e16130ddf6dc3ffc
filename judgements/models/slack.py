"""A team's Slack workspace: the connection (a bot token, the signing secret, a channel or
direct messages), the held verdicts posted there (one row per message, kept until posted
and then until the message shows the review), who a Slack user is in MAGI, and the
signatures of the requests Slack already sent (judgements/outcome/slack_*.py, docs/slack.md).
"""

from datetime import datetime

from django.conf import settings
from django.db import models
from django.utils import timezone

from judgements.models.choices import ids_from_one
from judgements.models.leases import Leased, LeaseQuerySet
from judgements.models.states import Move, StateGraph


class SlackConnection(models.Model):
    """How a team's held verdicts reach Slack. The two secrets are kept in clear, as the
    webhook secrets are (the HMAC and Slack's Web API need them), and are write-only: no
    page, answer or export shows them back."""

    team = models.OneToOneField("judgements.Team", on_delete=models.CASCADE, related_name="slack")
    bot_token = models.CharField(max_length=255)
    signing_secret = models.CharField(max_length=255)
    # A channel's ID (C0123ABCD), where every held verdict of the team is posted; empty
    # with `direct_messages`: each reviewer gets their own message instead.
    channel = models.CharField(max_length=40, blank=True)
    direct_messages = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    # What Slack last said: the team's page shows a refused token or a missing channel.
    last_ok_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [ids_from_one("slack_connection_id_from_one")]

    def __str__(self) -> str:
        where = "direct messages" if self.direct_messages else f"channel {self.channel}"
        return f"Slack of {self.team} ({where})"


class SlackLink(models.Model):
    """A Slack user known as a MAGI user because they said so from both sides: a click in
    Slack (signed by Slack) gave them a link that they opened signed in to MAGI. Beats
    the email match."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="slack_links"
    )
    # The Slack workspace (T0123) and the user in it (U0123).
    workspace = models.CharField(max_length=40)
    slack_user = models.CharField(max_length=40)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            ids_from_one("slack_link_id_from_one"),
            models.UniqueConstraint(fields=["workspace", "slack_user"], name="slack_link_once"),
        ]

    def __str__(self) -> str:
        return f"Slack {self.slack_user} in {self.workspace} as {self.user}"


class SlackRequest(models.Model):
    """A signature of a request Slack sent that was acted on: the same request again (a
    replay, within the five minutes its timestamp is accepted) is refused. Rows older than
    the window are deleted as new ones come."""

    signature = models.CharField(max_length=100, unique=True)
    received_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [ids_from_one("slack_request_id_from_one")]
        indexes = [models.Index(fields=["received_at"], name="slack_request_received_idx")]

    def __str__(self) -> str:
        return f"Slack request {self.signature[:12]} at {self.received_at:%H:%M:%S}"


class SlackMessageStatus(models.TextChoices):
    PENDING = "pending", "To post"
    POSTED = "posted", "Posted"
    OUTDATED = "outdated", "Posted, to update"
    FAILED = "failed", "Failed"
    DROPPED = "dropped", "Not posted"


class SlackMessageStates(StateGraph):
    """A Slack message's states and moves (outcome/slack_outbox.py `settle`): posted, or
    tried again after its backoff (or Slack's Retry-After), or given up; once a person
    reviews the verdict, outdated until the message shows who decided what; given up,
    tried again once the team sets a new bot token."""

    states, initial = SlackMessageStatus, SlackMessageStatus.PENDING
    post = Move((SlackMessageStatus.PENDING,), (SlackMessageStatus.POSTED,))
    # Reviewed before it was posted, or nobody in Slack to post it to.
    drop = Move((SlackMessageStatus.PENDING,), (SlackMessageStatus.DROPPED,))
    outdate = Move((SlackMessageStatus.POSTED,), (SlackMessageStatus.OUTDATED,))
    update = Move((SlackMessageStatus.OUTDATED,), (SlackMessageStatus.POSTED,))
    retry_post = Move((SlackMessageStatus.PENDING,), (SlackMessageStatus.PENDING,))
    retry_update = Move((SlackMessageStatus.OUTDATED,), (SlackMessageStatus.OUTDATED,))
    give_up = Move(
        (SlackMessageStatus.PENDING, SlackMessageStatus.OUTDATED), (SlackMessageStatus.FAILED,)
    )
    # A new bot token: what failed is tried again (posted, or updated if it was posted).
    requeue = Move(
        (SlackMessageStatus.FAILED,), (SlackMessageStatus.PENDING, SlackMessageStatus.OUTDATED)
    )


class SlackMessageQuerySet(LeaseQuerySet["SlackMessage"]):
    def due(self, now: datetime) -> "SlackMessageQuerySet":
        """To post or to update, its wait over, nobody holding it."""
        waiting = [SlackMessageStatus.PENDING, SlackMessageStatus.OUTDATED]
        return self.free(now).filter(status__in=waiting, next_attempt_at__lte=now)


class SlackMessage(Leased):
    """One held verdict's message in Slack: in the team's channel, or to one reviewer
    (`recipient`). Held like an email (Leased, models/leases.py): posted with no database
    lock held, by one worker at a time, and posted again by another when its worker died
    before recording it."""

    judgement = models.ForeignKey(
        "judgements.Judgement", on_delete=models.CASCADE, related_name="slack_messages"
    )
    connection = models.ForeignKey(
        SlackConnection, on_delete=models.CASCADE, related_name="messages"
    )
    # A reviewer's direct message; None: the team's channel.
    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="slack_messages",
    )
    status = SlackMessageStates.column()
    # Where Slack put it (a channel's ID, a direct message's) and its timestamp, the
    # message's id for chat.update; empty until posted.
    channel = models.CharField(max_length=40, blank=True)
    ts = models.CharField(max_length=40, blank=True)
    # The message as last posted showed the review (no buttons any more).
    shows_review = models.BooleanField(default=False)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    posted_at = models.DateTimeField(null=True, blank=True)

    objects = SlackMessageQuerySet.as_manager()

    class Meta:
        constraints = [
            ids_from_one("slack_message_id_from_one"),
            models.UniqueConstraint(
                fields=["judgement", "connection"],
                condition=models.Q(recipient__isnull=True),
                name="slack_message_once_per_channel",
            ),
            models.UniqueConstraint(
                fields=["judgement", "connection", "recipient"],
                condition=models.Q(recipient__isnull=False),
                name="slack_message_once_per_reviewer",
            ),
        ]
        indexes = [models.Index(fields=["status", "next_attempt_at"], name="slack_due_idx")]

    def __str__(self) -> str:
        to = f"to {self.recipient}" if self.recipient_id else "to the channel"
        return f"judgement {self.judgement_id} {to}: {self.status}"
