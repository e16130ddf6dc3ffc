"""Held verdicts posted to a team's Slack, and their messages kept up to date: the same
leased outbox as the reviewers' emails and the webhooks.

    a held verdict of a team with a Slack connection  ->  queue: a SlackMessage row (one
        for the channel, or one per reviewer with direct messages), at the next sweep
    every worker's sweep (engine/runner.py)  ->  deliver: claim the due rows with the
        lease every background job uses (models/leases.py), post them with no lock held
        (chat.postMessage, the worker renewing its lease meanwhile), `settle` each
    a person reviews it (the page, the API or Slack)  ->  its posted messages are
        outdated, and updated in place (chat.update) to say who decided what and when

A refusal that another try cannot mend (a revoked token, a channel the bot is not in) is
given up at once and shown on the team's page (SlackConnection.last_error); a 429 waits
for as long as Slack's Retry-After says; anything else is tried again after the
webhooks' doubling wait, up to MAGI_SLACK_MAX_ATTEMPTS. A worker that dies between
posting and recording it leaves the row to another once its lease runs out: posted once
more, never lost.
"""

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from judgements.models import (
    Judgement,
    SlackConnection,
    SlackLink,
    SlackMessage,
    SlackMessageStates,
    SlackMessageStatus,
    held,
)
from judgements.models.leases import RELEASED
from judgements.models.magi_settings import magi_settings
from judgements.models.states import Move, Told, transition
from judgements.outcome import slack_messages
from judgements.outcome.notifications import reviewers_of
from judgements.outcome.webhooks import backoff_seconds

log = logging.getLogger(__name__)

BATCH = 20
# Slack's answers that no retry mends: the token or the channel must be changed first.
# In words for the team's page.
NOT_MENDED_BY_RETRY = {
    "invalid_auth": "Slack refused the bot token (invalid_auth): set a new one.",
    "not_authed": "Slack got no bot token (not_authed): set one.",
    "token_revoked": "The bot token was revoked in Slack (token_revoked): set a new one.",
    "token_expired": "The bot token expired (token_expired): set a new one.",
    "account_inactive": "The bot's Slack account is deactivated (account_inactive).",
    "missing_scope": "The Slack app lacks a scope it needs (missing_scope): see docs/slack.md.",
    "channel_not_found": "Slack knows no such channel (channel_not_found): check its ID.",
    "not_in_channel": "The bot is not in the channel (not_in_channel): invite it there.",
    "is_archived": "The channel is archived (is_archived): choose another.",
    "message_not_found": "The message is gone from Slack (message_not_found).",
}
RETRY_AFTER_DEFAULT = 30.0


def client(connection: SlackConnection) -> WebClient:
    """Slack's own client for the team's bot, at MAGI_SLACK_API_URL. No retries of its
    own (they would sleep in the worker): the outbox retries, after Slack's Retry-After."""
    return WebClient(
        token=connection.bot_token,
        base_url=magi_settings.MAGI_SLACK_API_URL,
        timeout=max(1, int(magi_settings.MAGI_SLACK_TIMEOUT)),
        retry_handlers=[],
    )


@dataclass(frozen=True)
class Failure:
    """Why a call to Slack failed: in words, whether a retry may mend it, and how long
    Slack asked to wait (a 429's Retry-After)."""

    error: str
    final: bool = False
    wait: float | None = None


def failure_of(exc: Exception) -> Failure:
    if isinstance(exc, SlackApiError):
        response = exc.response
        code = str(response.get("error", "") or f"HTTP {response.status_code}")
        if response.status_code == 429:
            after = str(
                response.headers.get("Retry-After", response.headers.get("retry-after", ""))
            )
            wait = float(after) if after.isdigit() else RETRY_AFTER_DEFAULT
            return Failure(f"rate limited by Slack (429): retry after {wait:g} s", wait=wait)
        if code in NOT_MENDED_BY_RETRY:
            return Failure(NOT_MENDED_BY_RETRY[code], final=True)
        status = "" if response.status_code == 200 else f" (HTTP {response.status_code})"
        return Failure(f"Slack answered {code}{status}")
    return Failure(f"{type(exc).__name__}: {exc}"[:500])


def record_answer(connection_id: int, failure: Failure | None, now: datetime) -> None:
    """What Slack last said, for the team's page: a refusal no retry mends, or that it
    answered."""
    found = SlackConnection.objects.filter(pk=connection_id)
    if failure is None:
        found.update(last_ok_at=now, last_error="", last_error_at=None)
    elif failure.final:
        found.update(last_error=failure.error, last_error_at=now)


# --- queueing ------------------------------------------------------------------------


def queue(limit: int = BATCH) -> int:
    """A row for each held verdict of a team connected to Slack that has none yet (so a
    team connecting today gets what waits now): its channel's, or one per reviewer.
    Returns how many judgements were queued."""
    due = list(
        Judgement.objects.filter(held(), panel__team__slack__isnull=False)
        .filter(evaluation_run__isnull=True)
        .exclude(slack_messages__connection=F("panel__team__slack"))[:limit]
    )
    for judgement in due:
        connection = SlackConnection.objects.get(team__panels=judgement.panel_id)
        if not connection.direct_messages:
            rows = [SlackMessage(judgement=judgement, connection=connection)]
        else:
            rows = [
                SlackMessage(judgement=judgement, connection=connection, recipient=user)
                for user in reviewers_of(judgement)
            ] or [  # nobody to tell: marked, so the next sweep does not look again
                SlackMessage(
                    judgement=judgement,
                    connection=connection,
                    status=SlackMessageStatus.DROPPED,
                    error="The panel has no reviewers to message.",
                )
            ]
        SlackMessage.objects.bulk_create(rows, ignore_conflicts=True)
    return len(due)


def reviewed() -> Q:
    return Q(judgement__override__isnull=False) | Q(judgement__confirmation__isnull=False)


def outdate_reviewed(worker_id: str, judgement_id: int | None = None) -> int:
    """Posted messages still showing buttons for a verdict a person has since reviewed
    (here, on the page or over the API): outdated, to be updated in place."""
    found = SlackMessage.objects.filter(reviewed(), shows_review=False)
    if judgement_id is not None:
        found = found.filter(judgement_id=judgement_id)
    ids = list(found.filter(status=SlackMessageStatus.POSTED).values_list("pk", flat=True))
    if not ids:
        return 0
    return transition(
        SlackMessage.objects.filter(pk__in=ids),
        SlackMessageStates.outdate,
        SlackMessageStatus.OUTDATED,
        worker=worker_id,
        told=[Told(f"slack messages {ids} (reviewed)", SlackMessageStatus.POSTED)],
    )


def requeue_failed(connection_id: int, worker_id: str) -> int:
    """The connection's given-up messages tried again (a new bot token may mend what
    failed): those never posted are posted, those posted are updated."""
    failed = SlackMessage.objects.filter(
        connection_id=connection_id, status=SlackMessageStatus.FAILED
    )
    again = {"attempts": 0, "error": "", "next_attempt_at": timezone.now()}
    moved = 0
    for target, posted in (
        (SlackMessageStatus.PENDING, False),
        (SlackMessageStatus.OUTDATED, True),
    ):
        rows = failed.exclude(ts="") if posted else failed.filter(ts="")
        told = [
            Told(
                f"slack messages of connection {connection_id} (new token)",
                SlackMessageStatus.FAILED,
            )
        ]
        moved += transition(
            rows, SlackMessageStates.requeue, target, worker=worker_id, told=told, **again
        )
    return moved


# --- sending -------------------------------------------------------------------------


def claim(worker_id: str, now: datetime, judgement_id: int | None = None) -> list[SlackMessage]:
    """Due rows nobody holds, leased to `worker_id` (LeaseQuerySet.claim), each attempt
    counted before anything is sent."""
    due = SlackMessage.objects.due(now)
    if judgement_id is not None:
        due = due.filter(judgement_id=judgement_id)
    claimed = due.claim(
        worker_id, BATCH, order=("next_attempt_at", "pk"), now=now, attempts=F("attempts") + 1
    )
    return list(
        SlackMessage.objects.filter(pk__in=[pk for (pk,) in claimed])
        .select_related("connection", "recipient")
        .order_by("next_attempt_at", "pk")
    )


def settle(row: SlackMessage, worker_id: str, outcome: str, move: Move, **changes: object) -> bool:
    """The one change of a message's state after a try, releasing the lease; False when
    another worker holds the row now (it took over after this one's lease ran out)."""
    (target,) = move.targets
    moved = transition(
        SlackMessage.objects.filter(pk=row.pk).held_by(worker_id),
        move,
        target,
        worker=worker_id,
        told=[
            Told(
                f"slack message {row.pk} (judgement {row.judgement_id})", row.status, f": {outcome}"
            )
        ],
        **RELEASED,
        **changes,
    )
    if not moved:
        log.info("slack message %s: %s; not ours any more", row.pk, outcome)
    return bool(moved)


def slack_user_of(api: WebClient, row: SlackMessage) -> str | None:
    """The reviewer's Slack user, for a direct message: the link they made, else the one
    Slack finds by their email."""
    user: User | None = row.recipient
    if user is None:
        return None
    link = SlackLink.objects.filter(user=user).order_by("-created_at").first()
    if link is not None:
        return link.slack_user
    return slack_user_by_email(api, user)


def slack_user_by_email(api: WebClient, user: User) -> str | None:
    """The Slack user whose email is `user`'s (users.lookupByEmail), or None."""
    if not user.email:
        return None
    try:
        found = api.users_lookupByEmail(email=user.email)
    except SlackApiError as exc:
        if exc.response.get("error") == "users_not_found":
            return None
        raise
    return str(found["user"]["id"])


def post_one(row: SlackMessage, worker_id: str, now: datetime) -> str:
    """Post (or update) one claimed row and settle it; returns its status now."""
    judgement = Judgement.objects.with_results().select_related("panel").get(pk=row.judgement_id)
    posting = row.status == SlackMessageStatus.PENDING
    if posting and not judgement.is_held:
        settle(row, worker_id, "reviewed before it was posted", SlackMessageStates.drop)
        return SlackMessageStatus.DROPPED
    api = client(row.connection)
    message, shows_review = slack_messages.held_message(judgement)
    try:
        if posting:
            channel = row.connection.channel
            if row.recipient_id is not None:
                found = slack_user_of(api, row)
                if found is None:
                    error = f"{row.recipient} has no Slack user with their email, and no link."
                    settle(row, worker_id, error, SlackMessageStates.drop, error=error)
                    return SlackMessageStatus.DROPPED
                channel = found
            answer = api.chat_postMessage(
                channel=channel, text=message["text"], blocks=message["blocks"]
            )
            changes: dict[str, object] = {
                "channel": str(answer["channel"]),
                "ts": str(answer["ts"]),
                "posted_at": now,
            }
            move = SlackMessageStates.post
        else:
            api.chat_update(
                channel=row.channel, ts=row.ts, text=message["text"], blocks=message["blocks"]
            )
            changes, move = {}, SlackMessageStates.update
    except Exception as exc:  # Slack away, refusing or rate limiting: see failure_of
        failure = failure_of(exc)
        log.warning("slack message %s not sent: %s", row.pk, failure.error)
        record_answer(row.connection_id, failure, now)
        if failure.final or row.attempts >= magi_settings.MAGI_SLACK_MAX_ATTEMPTS:
            settle(row, worker_id, failure.error, SlackMessageStates.give_up, error=failure.error)
            return SlackMessageStatus.FAILED
        wait = failure.wait if failure.wait is not None else backoff_seconds(row.attempts)
        retry = SlackMessageStates.retry_post if posting else SlackMessageStates.retry_update
        later = now + timedelta(seconds=wait)
        settle(row, worker_id, failure.error, retry, error=failure.error, next_attempt_at=later)
        return row.status
    record_answer(row.connection_id, None, now)
    settle(row, worker_id, "sent", move, error="", attempts=0, shows_review=shows_review, **changes)
    return SlackMessageStatus.POSTED


def renew_held(worker_id: str) -> int:
    """Renew the worker's leases on the messages it is posting."""
    waiting = [SlackMessageStatus.PENDING, SlackMessageStatus.OUTDATED]
    return SlackMessage.objects.filter(status__in=waiting).renew(worker_id)


def send_due(worker_id: str, judgement_id: int | None = None) -> int:
    """Post and update what is due (only `judgement_id`'s when given). Returns how many
    rows were tried."""
    now = timezone.now()
    rows = claim(worker_id, now, judgement_id)
    for row in rows:
        post_one(row, worker_id, now)
    return len(rows)


def deliver(worker_id: str) -> int:
    """One sweep's work: queue the new held verdicts, outdate what a person reviewed, post
    and update what is due."""
    with transaction.atomic():
        queue()
    outdate_reviewed(worker_id)
    return send_due(worker_id)
