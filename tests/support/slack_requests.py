"""What Slack sends MAGI when a reviewer clicks: interaction payloads as Slack documents
them (block_actions, view_submission), form-encoded as Slack posts them, and signed with
Slack's published v0 algorithm (HMAC-SHA256 of "v0:{timestamp}:{body}" keyed with the
app's signing secret; slack_sdk's SignatureVerifier.generate_signature is the reference
signer here, the app checks with its is_valid)."""

import json
import time
from urllib.parse import urlencode

from django.test import Client
from slack_sdk.signature import SignatureVerifier

from judgements.configuration import slack_config
from judgements.models import SlackConnection, Team
from tests.support.slack_server import TEAM_ID

BOT_TOKEN = "xoxb-1111-2222-magitests"
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
CHANNEL = "C0MAGIHELD"
INTERACTIVITY = "/slack/interactivity/"


def connect(
    team: Team,
    *,
    direct_messages: bool = False,
    secret: str = SIGNING_SECRET,
    token: str = BOT_TOKEN,
) -> SlackConnection:
    """The team connected to Slack the one way a connection is made (as the operator)."""
    return slack_config.save(
        None,
        team,
        {
            "channel": "" if direct_messages else CHANNEL,
            "direct_messages": direct_messages,
            "bot_token": token,
            "signing_secret": secret,
        },
    )


def form_body(payload: dict) -> bytes:
    return urlencode({"payload": json.dumps(payload)}).encode()


def signed_headers(
    body: bytes, *, secret: str = SIGNING_SECRET, timestamp: int | None = None
) -> dict[str, str]:
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    signature = SignatureVerifier(secret).generate_signature(timestamp=stamp, body=body)
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": str(signature)}


def block_action(
    judgement_id: int,
    action_id: str,
    slack_user: str,
    *,
    channel: str = CHANNEL,
    ts: str = "1.000100",
) -> dict:
    """A button pressed on a message MAGI posted."""
    return {
        "type": "block_actions",
        "team": {"id": TEAM_ID, "domain": "magi-tests"},
        "user": {"id": slack_user, "username": slack_user.lower(), "team_id": TEAM_ID},
        "api_app_id": "A0MAGI",
        "token": "deprecated-verification-token",
        "container": {
            "type": "message",
            "message_ts": ts,
            "channel_id": channel,
            "is_ephemeral": False,
        },
        "trigger_id": f"trigger-{slack_user}-{judgement_id}",
        "channel": {"id": channel, "name": "held-verdicts"},
        "message": {"type": "message", "ts": ts, "text": "Held for review"},
        "response_url": "https://hooks.slack.invalid/actions/T0MAGI/1/x",
        "actions": [
            {
                "type": "button",
                "action_id": action_id,
                "block_id": "magi_review",
                "value": str(judgement_id),
                "action_ts": f"{time.time():.6f}",
            }
        ],
    }


def override_submission(
    judgement_id: int, slack_user: str, reason: str, *, channel: str = CHANNEL, ts: str = "1.000100"
) -> dict:
    """The override modal submitted with a reason."""
    metadata = json.dumps({"judgement": judgement_id, "channel": channel, "ts": ts})
    return {
        "type": "view_submission",
        "team": {"id": TEAM_ID, "domain": "magi-tests"},
        "user": {"id": slack_user, "username": slack_user.lower(), "team_id": TEAM_ID},
        "api_app_id": "A0MAGI",
        "trigger_id": f"trigger-{slack_user}-submit",
        "view": {
            "id": "V0MAGI",
            "type": "modal",
            "callback_id": "magi_override_view",
            "private_metadata": metadata,
            "state": {
                "values": {"reason": {"reason": {"type": "plain_text_input", "value": reason}}}
            },
        },
    }


def post(client: Client, payload: dict, **signing):
    """The payload posted to the app's interactivity URL as Slack posts it."""
    body = form_body(payload)
    return post_body(client, body, signed_headers(body, **signing))


def post_body(client: Client, body: bytes, headers: dict[str, str] | None = None):
    """These bytes posted to the interactivity URL with these headers, as they are."""
    return client.post(
        INTERACTIVITY,
        data=body,
        content_type="application/x-www-form-urlencoded",
        headers=headers or {},
    )
