"""A click in Slack is a review: the interactivity requests Slack sends when a reviewer
presses Confirm or Override… on a held verdict's message (outcome/slack_messages.py), or
submits the override's modal.

    the request  ->  `checked`: Slack's timestamp within five minutes, its v0 signature
        (slack_sdk's SignatureVerifier) made with a connected team's signing secret, and
        never seen before (SlackRequest: a replay is refused)
    the Slack user  ->  `person`: the MAGI user they linked, else the one whose email is
        the verified email Slack gives for them (users.info)
    the review  ->  the page's own rules and functions: visible to them, a reviewer of
        its panel and not its author on a four-eyes panel (overrides.refusal), still
        held, then reviews.confirm or overrides.override: the history, the audit log,
        the receipt and the webhooks follow as from the page

Every refusal past the signature is answered to the clicker alone (an ephemeral message,
or the modal's error) and changes nothing. Once stored, the message is updated in place
at once (slack_outbox.send_due), and by the next sweep if Slack was away.
"""

import json
import logging
import os
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TypedDict
from urllib.parse import parse_qs

from django.contrib.auth.models import User
from django.core import signing
from django.db import IntegrityError, transaction
from django.utils import timezone
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.signature import SignatureVerifier

from judgements.core.errors import InvalidInput
from judgements.core.json_values import JsonObject
from judgements.models import Judgement, SlackConnection, SlackLink, SlackRequest
from judgements.models.choices import ReviewRefusal
from judgements.models.magi_settings import magi_settings
from judgements.outcome import (
    overrides,
    results,
    reviews,
    slack_messages,
    slack_outbox,
    slack_payloads,
)
from judgements.outcome.slack_messages import OverrideTarget

log = logging.getLogger(__name__)

# How far a request's timestamp may be from now, as Slack advises and SignatureVerifier
# checks: an older request is refused, and a replay within it is caught by its signature.
WINDOW_SECONDS = 5 * 60
CONFIRM_REASON = "Confirmed in Slack with the Confirm button."
LINK_SALT = "magi.slack.link"
LINK_MAX_AGE = 60 * 60


class Refused(Exception):
    """Not a request MAGI acts on: answered 401 with `message` (nobody in Slack sees it)."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class Unanswered(Exception):
    """Slack did not say who clicked (away, or refusing): nobody can be decided for."""


@dataclass
class Reply:
    """What the endpoint answers Slack: an HTTP status and, for a modal, its JSON."""

    status: int = 200
    body: JsonObject = field(default_factory=dict)


class Click(TypedDict):
    """Who clicked what, where, read from a verified payload."""

    judgement: int
    workspace: str
    slack_user: str
    channel: str
    ts: str


# --- the request ---------------------------------------------------------------------


def checked(body: bytes, timestamp: str | None, signature: str | None) -> list[SlackConnection]:
    """The connections whose signing secret signed this request; raises Refused for a
    request without Slack's headers, an old one, a bad signature or a replay."""
    if not timestamp or not signature:
        raise Refused("Not a request from Slack: its signature headers are missing.")
    try:
        sent_at = int(timestamp)
    except ValueError:
        raise Refused("Not a request from Slack: its timestamp is not a number.") from None
    if abs(time.time() - sent_at) > WINDOW_SECONDS:
        raise Refused("Refused: the request's timestamp is more than five minutes from now.")
    signed = [
        connection
        for connection in SlackConnection.objects.select_related("team")
        if SignatureVerifier(connection.signing_secret).is_valid(body, timestamp, signature)
    ]
    if not signed:
        raise Refused("Refused: the request's signature matches no team's signing secret.")
    now = timezone.now()
    SlackRequest.objects.filter(
        received_at__lt=now - timedelta(seconds=2 * WINDOW_SECONDS)
    ).delete()
    try:
        with transaction.atomic():
            SlackRequest.objects.create(signature=signature[:100], received_at=now)
    except IntegrityError:
        raise Refused("Refused: this request was already received (a replay).") from None
    return signed


def payload_of(body: bytes) -> JsonObject:
    """The JSON Slack sends as the form field `payload`, an object (its shape is read by
    outcome/slack_payloads.py)."""
    fields = parse_qs(body.decode("utf-8", "replace"))
    try:
        found = json.loads(fields["payload"][0])
    except (KeyError, IndexError, json.JSONDecodeError):
        raise InvalidInput({"payload": ["Must be Slack's interaction payload, as JSON."]}) from None
    if not isinstance(found, dict):
        raise InvalidInput({"payload": ["Must be a JSON object."]})
    return found


def handle(body: bytes, timestamp: str | None, signature: str | None) -> Reply:
    """One interactivity request, answered."""
    try:
        signed = checked(body, timestamp, signature)
    except Refused as exc:
        log.warning("slack request refused: %s", exc.message)
        return Reply(401, {"error": exc.message})
    try:
        payload = payload_of(body)
        kind = payload.get("type")
        if kind == "block_actions":
            return clicked(signed, slack_payloads.BlockActions.model_validate(payload))
        if kind == "view_submission":
            return submitted(signed, slack_payloads.ViewSubmission.model_validate(payload))
    except (InvalidInput, KeyError, TypeError, ValueError) as exc:
        log.warning("slack payload not understood: %s", exc)
        return Reply(400, {"error": "Not an interaction MAGI sent."})
    return Reply()  # another kind of interaction: nothing of MAGI's


def connection_for(signed: list[SlackConnection], judgement: Judgement | None) -> SlackConnection:
    """The judgement's team's connection among those that signed; else the first (to
    answer with), which acts on nothing."""
    team_id = judgement.panel.team_id if judgement is not None and judgement.panel else None
    return next((c for c in signed if c.team_id == team_id), signed[0])


# --- who clicked -----------------------------------------------------------------------


def person(api: WebClient, workspace: str, slack_user: str) -> User | None:
    """The MAGI user behind a Slack user: the link they made, else the one active user
    whose email is the verified email Slack has for them; None when there is none."""
    link = (
        SlackLink.objects.filter(workspace=workspace, slack_user=slack_user)
        .select_related("user")
        .first()
    )
    if link is not None:
        return link.user if link.user.is_active else None
    try:
        found = slack_payloads.UserInfo.model_validate(api.users_info(user=slack_user)["user"])
    except SlackApiError as exc:
        if exc.response.get("error") in ("user_not_found", "user_not_visible"):
            return None
        raise Unanswered(slack_outbox.failure_of(exc).error) from None
    except OSError as exc:  # Slack away: not "nobody", which would send them to link
        raise Unanswered(slack_outbox.failure_of(exc).error) from None
    email = found.verified_email()
    if email is None:
        return None
    matches = list(User.objects.filter(email__iexact=email, is_active=True)[:2])
    return matches[0] if len(matches) == 1 else None


def link_address(workspace: str, slack_user: str) -> str:
    """A page where the Slack user, signed in to MAGI, says who they are there (an
    hour's signed link: Slack vouched for the Slack side, the sign-in for MAGI's)."""
    token = signing.dumps({"workspace": workspace, "slack_user": slack_user}, salt=LINK_SALT)
    return f"{magi_settings.MAGI_SITE_URL}/account/slack/link/?token={token}"


def linked(token: str) -> tuple[str, str] | None:
    """The Slack workspace and user a link's token names, or None when it is forged or
    older than an hour."""
    try:
        found = signing.loads(token, salt=LINK_SALT, max_age=LINK_MAX_AGE)
    except signing.BadSignature:
        return None
    return str(found["workspace"]), str(found["slack_user"])


def link(user: User, workspace: str, slack_user: str) -> SlackLink:
    """Make `user` the MAGI user of that Slack user (replacing who was before)."""
    stored, _ = SlackLink.objects.update_or_create(
        workspace=workspace, slack_user=slack_user, defaults={"user": user}
    )
    return stored


# --- the review ---------------------------------------------------------------------


def why_not(judgement: Judgement, user: User) -> str | None:
    """Why `user` may not review this judgement from Slack now, in words for them; None
    when they may. The page's rules, in the page's order: one they may not see is, to
    them, one whose panel they do not review (its panel's name is on the message)."""
    panel = f" (“{judgement.panel}”)" if judgement.panel else ""
    not_theirs = f"You are not a reviewer of this panel{panel}: nothing changed."
    if results.find_visible(judgement.pk, user) is None:
        return not_theirs
    refused = overrides.refusal(user, judgement)
    if refused is not None:
        return refused.message if refused.reason == ReviewRefusal.FOUR_EYES else not_theirs
    return no_longer_held(judgement)


def no_longer_held(judgement: Judgement) -> str | None:
    judgement = Judgement.objects.select_related("override__by", "confirmation__by").get(
        pk=judgement.pk
    )
    override = judgement.override_or_none
    if override is not None:
        return (
            f"Already overridden by {override.by.get_username()} at {override.at:%Y-%m-%d %H:%M} "
            "UTC: nothing changed."
        )
    confirmation = judgement.confirmation_or_none
    if confirmation is not None:
        return (
            f"Already confirmed by {confirmation.by.get_username()} at "
            f"{confirmation.at:%Y-%m-%d %H:%M} UTC: nothing changed."
        )
    if not judgement.is_held:
        return "It no longer waits for a review: nothing changed."
    return None


def click_of(payload: slack_payloads.BlockActions) -> tuple[str, Click, str]:
    """The action, who clicked it where, and the trigger for a modal."""
    action = payload.actions[0]
    click: Click = {
        "judgement": int(str(action.value)),
        "workspace": payload.workspace(),
        "slack_user": payload.user.id,
        "channel": payload.channel_id(),
        "ts": payload.message_ts(),
    }
    return action.action_id, click, payload.trigger_id


def tell(api: WebClient, click: Click, text: str) -> None:
    """An answer only the clicker sees."""
    try:
        api.chat_postEphemeral(channel=click["channel"], user=click["slack_user"], text=text)
    except (SlackApiError, OSError) as exc:
        log.warning("slack: could not answer %s privately: %s", click["slack_user"], exc)


def reviewer_of(
    signed: list[SlackConnection], click: Click
) -> tuple[WebClient, Judgement | None, User | None, str | None]:
    """The client to answer with, the judgement, the MAGI user and why they may not
    review it (None: they may)."""
    judgement = Judgement.objects.select_related("panel").filter(pk=click["judgement"]).first()
    connection = connection_for(signed, judgement)
    api = slack_outbox.client(connection)
    if (
        judgement is None
        or judgement.panel is None
        or judgement.panel.team_id != connection.team_id
    ):
        return (
            api,
            judgement,
            None,
            "This message is not one of this team's held verdicts: nothing changed.",
        )
    try:
        user = person(api, click["workspace"], click["slack_user"])
    except Unanswered as exc:
        log.warning("slack: who %s is went unanswered: %s", click["slack_user"], exc)
        return (
            api,
            judgement,
            None,
            f"Slack did not say who you are ({exc}): nothing changed; try again.",
        )
    if user is None:
        address = link_address(click["workspace"], click["slack_user"])
        return (
            api,
            judgement,
            None,
            (
                "MAGI does not know who you are: no MAGI account has your Slack email address. "
                f"Sign in to MAGI and link your Slack account here: {address} (nothing changed)."
            ),
        )
    return api, judgement, user, why_not(judgement, user)


def clicked(signed: list[SlackConnection], payload: slack_payloads.BlockActions) -> Reply:
    action, click, trigger = click_of(payload)
    if action not in (slack_messages.CONFIRM, slack_messages.OVERRIDE):
        return Reply()
    api, judgement, user, refusal = reviewer_of(signed, click)
    if refusal is not None or judgement is None or user is None:
        tell(api, click, refusal or "Nothing changed.")
        return Reply()
    if action == slack_messages.OVERRIDE:
        target: OverrideTarget = {
            "judgement": judgement.pk,
            "channel": click["channel"],
            "ts": click["ts"],
        }
        try:
            api.views_open(trigger_id=trigger, view=slack_messages.override_view(judgement, target))
        except (SlackApiError, OSError) as exc:
            error = slack_outbox.failure_of(exc).error
            tell(api, click, f"Slack did not open the override's form ({error}): nothing changed.")
        return Reply()
    try:
        reviews.confirm(judgement.pk, user, CONFIRM_REASON)
    except overrides.OverrideConflict:
        tell(api, click, no_longer_held(judgement) or "It was already reviewed: nothing changed.")
        return Reply()
    update_now(judgement.pk)
    return Reply()


def submitted(signed: list[SlackConnection], payload: slack_payloads.ViewSubmission) -> Reply:
    if payload.view.callback_id != slack_messages.OVERRIDE_VIEW:
        return Reply()
    target = payload.target()
    click: Click = {
        "judgement": target.judgement,
        "workspace": payload.workspace(),
        "slack_user": payload.user.id,
        "channel": target.channel,
        "ts": target.ts,
    }
    reason = payload.text(slack_messages.REASON_BLOCK)
    _, judgement, user, refusal = reviewer_of(signed, click)
    if refusal is not None or judgement is None or user is None:
        return modal_error(refusal or "Nothing changed.")
    decision = slack_messages.other_decision(judgement)
    try:
        overrides.override(judgement.pk, user, decision, reason)
    except InvalidInput as exc:
        return modal_error(
            " ".join(message for messages in exc.errors.values() for message in messages)
        )
    except overrides.OverrideConflict:
        return modal_error(no_longer_held(judgement) or "It was already reviewed: nothing changed.")
    update_now(judgement.pk)
    return Reply()


def modal_error(message: str) -> Reply:
    """The modal stays open, the message under its reason field: seen by the clicker only."""
    errors: JsonObject = {slack_messages.REASON_BLOCK: message[: slack_messages.INPUT_MAX_CHARS]}
    return Reply(200, {"response_action": "errors", "errors": errors})


def update_now(judgement_id: int) -> None:
    """The judgement's messages updated in place at once; what fails here, the sweep
    does later."""
    worker = f"slack-web:{os.getpid()}"
    slack_outbox.outdate_reviewed(worker, judgement_id)
    slack_outbox.send_due(worker, judgement_id)
