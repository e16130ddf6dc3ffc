"""A team's Slack connection set, changed and removed (the team's Slack page, the API's
/api/teams/{id}/slack, `magi apply`), each change audited without its secrets, and the
test message `manage.py team slack-test` and the page send (docs/slack.md).

Who may: staff and the team's members, as for its members. The bot token and the signing
secret are write-only: given once (left out later: kept as they are), never answered,
exported or shown; the audit records a fingerprint of each, so a change shows without
the secret.
"""

import hashlib
import re
from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

import yaml
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from slack_sdk.errors import SlackApiError

from judgements.configuration import team_config, teams
from judgements.core.errors import InvalidInput
from judgements.core.json_values import JsonObject
from judgements.models import AuditSubject, Panel, SlackConnection, Team
from judgements.models.magi_settings import magi_settings
from judgements.outcome import slack_outbox

CHANNEL_PATTERN = re.compile(r"^[CG][A-Z0-9]{2,39}$")
TOKEN_PATTERN = re.compile(r"^xoxb-[A-Za-z0-9-]{1,250}$")
SECRET_PATTERN = re.compile(r"^[A-Za-z0-9]{8,255}$")
INTERACTIVITY_PATH = "/slack/interactivity/"
TEST_TEXT = "MAGI is connected: the held verdicts of the team {team} will come here."


class SlackFields(TypedDict):
    """A connection as written: where it posts and, when given, its secrets."""

    channel: str
    direct_messages: bool
    bot_token: NotRequired[str]
    signing_secret: NotRequired[str]


def interactivity_url() -> str:
    """What the Slack app's Interactivity & Shortcuts page (and its manifest) names."""
    return f"{magi_settings.MAGI_SITE_URL}{INTERACTIVITY_PATH}"


# What the app needs: post and update its messages (chat:write), and read who clicked and
# find reviewers by their email (users:read, users:read.email).
BOT_SCOPES = ["chat:write", "users:read", "users:read.email"]


def manifest(team: Team) -> JsonObject:
    """The Slack app's manifest for the team (api.slack.com/apps, From an app manifest)."""
    return {
        "display_information": {
            "name": f"MAGI {team.name}"[:35],
            "description": "Held MAGI verdicts, confirmed or overridden in Slack.",
        },
        "features": {"bot_user": {"display_name": "MAGI", "always_online": False}},
        "oauth_config": {"scopes": {"bot": [*BOT_SCOPES]}},
        "settings": {
            "interactivity": {"is_enabled": True, "request_url": interactivity_url()},
            "org_deploy_enabled": False,
            "socket_mode_enabled": False,
            "token_rotation_enabled": False,
        },
    }


def manifest_yaml(team: Team) -> str:
    return yaml.safe_dump(manifest(team), sort_keys=False)


def fingerprint(secret: str) -> str:
    return "sha256:" + hashlib.sha256(secret.encode()).hexdigest()[:12]


class SlackState(TypedDict):
    """A team's Slack connection as the audit records it: where it posts, and fingerprints
    of its secrets (never the secrets), keys in its rows' order."""

    channel: str
    direct_messages: bool
    bot_token: str
    signing_secret: str


def audit_state(connection: SlackConnection | None) -> SlackState | None:
    """What the audit records: where it posts, and fingerprints of the secrets."""
    if connection is None:
        return None
    return {
        "channel": connection.channel,
        "direct_messages": connection.direct_messages,
        "bot_token": fingerprint(connection.bot_token),
        "signing_secret": fingerprint(connection.signing_secret),
    }


def connection_of(team: Team) -> SlackConnection | None:
    return SlackConnection.objects.filter(team=team).first()


def errors_of(fields: SlackFields, existing: SlackConnection | None) -> dict[str, list[str]]:
    """What is wrong with the fields, by name."""
    errors: dict[str, list[str]] = {}
    channel = fields["channel"]
    if fields["direct_messages"] and channel:
        errors["channel"] = ["Leave it empty with direct messages: each reviewer gets theirs."]
    elif not fields["direct_messages"] and not CHANNEL_PATTERN.match(channel):
        errors["channel"] = [
            "Must be a channel's ID, such as C0123ABCD (in Slack: the channel's details, at "
            "the bottom), or choose direct messages."
        ]
    token = fields.get("bot_token")
    if token is None or token == "":
        if existing is None:
            errors["bot_token"] = ["Required: the app's Bot User OAuth Token (xoxb-…)."]
    elif not TOKEN_PATTERN.match(token):
        errors["bot_token"] = ["Must be a bot token: xoxb- then letters, digits and dashes."]
    secret = fields.get("signing_secret")
    if secret is None or secret == "":
        if existing is None:
            errors["signing_secret"] = ["Required: the app's Signing Secret (Basic Information)."]
    elif not SECRET_PATTERN.match(secret):
        errors["signing_secret"] = [
            "Must be the app's Signing Secret: 8 to 255 letters and digits."
        ]
    return errors


def save(by: User | None, team: Team, fields: SlackFields) -> SlackConnection:
    """Connect the team to Slack or change how; a secret left out (or empty) stays as it
    was. InvalidInput names each bad field; audited with its author."""
    with transaction.atomic():
        existing = SlackConnection.objects.select_for_update().filter(team=team).first()
        errors = errors_of(fields, existing)
        if errors:
            raise InvalidInput(errors)
        before = audit_state(existing)
        connection = existing or SlackConnection(team=team)
        connection.channel = fields["channel"]
        connection.direct_messages = fields["direct_messages"]
        new_token = (
            bool(fields.get("bot_token")) and fields.get("bot_token") != connection.bot_token
        )
        if new_token:
            connection.bot_token = fields["bot_token"]
            # A new token: what Slack said of the old one no longer holds.
            connection.last_error, connection.last_error_at = "", None
        if fields.get("signing_secret"):
            connection.signing_secret = fields["signing_secret"]
        connection.updated_at = timezone.now()
        connection.save()
        if new_token and existing is not None:
            # What the old token failed to post waits for the next sweep.
            slack_outbox.requeue_failed(connection.pk, "configuration")
        teams.record(
            AuditSubject.SLACK, teams.team_target(team), by, before, audit_state(connection)
        )
        return connection


def remove(by: User | None, team: Team) -> bool:
    """Disconnect the team from Slack (its messages there stay as they are); audited.
    False when it was not connected."""
    with transaction.atomic():
        existing = connection_of(team)
        if existing is None:
            return False
        before = audit_state(existing)
        existing.delete()
        teams.record(AuditSubject.SLACK, teams.team_target(team), by, before, None)
        return True


def team_for(by: User, team_id: int) -> Team:
    """The team, if `by` is staff or one of its members (else NotFound, as for teams)."""
    return team_config.visible_team(team_id, by)


# --- the test message -----------------------------------------------------------------


@dataclass
class TestReport:
    """How the test went: each line in words, and whether everything worked."""

    ok: bool = True
    lines: list[str] = field(default_factory=list)

    def failed(self, line: str) -> None:
        self.ok = False
        self.lines.append(line)


def reviewers(team: Team) -> list[User]:
    """Everyone who reviews a panel of the team, by username."""
    found: dict[int, User] = {}
    for panel in Panel.objects.filter(team=team):
        for user in panel.reviewing_users().filter(is_active=True):
            found[user.pk] = user
    return sorted(found.values(), key=lambda user: user.get_username())


def said(exc: SlackApiError) -> str:
    code = str(exc.response.get("error", "") or f"HTTP {exc.response.status_code}")
    return slack_outbox.NOT_MENDED_BY_RETRY.get(code, f"Slack answered {code}.")


def send_test(team: Team) -> TestReport:
    """Check the token (auth.test) and post a test message where held verdicts go (the
    channel, or each reviewer); what Slack said is kept for the team's page."""
    report = TestReport()
    connection = connection_of(team)
    if connection is None:
        report.failed(f"The team {team} has no Slack connection: set one on its Slack page.")
        return report
    api = slack_outbox.client(connection)
    now = timezone.now()
    text = TEST_TEXT.format(team=team.name)
    try:
        who = api.auth_test()
        report.lines.append(
            f"The bot token works: {who.get('user', '?')} in {who.get('team', '?')}."
        )
        if not connection.direct_messages:
            api.chat_postMessage(channel=connection.channel, text=text)
            report.lines.append(f"Posted a test message to {connection.channel}.")
        else:
            for user in reviewers(team):
                row_user = slack_outbox.slack_user_by_email(api, user)
                if row_user is None:
                    report.failed(f"{user.get_username()}: no Slack user with their email address.")
                    continue
                api.chat_postMessage(channel=row_user, text=text)
                report.lines.append(f"Sent a test message to {user.get_username()}.")
            if not report.lines[1:]:
                report.failed("Nobody reviews the team's panels: no message to send.")
    except SlackApiError as exc:
        report.failed(said(exc))
        slack_outbox.record_answer(connection.pk, slack_outbox.failure_of(exc), now)
        return report
    except Exception as exc:  # Slack away: said, as the outbox would say it
        report.failed(f"Slack could not be reached: {slack_outbox.failure_of(exc).error}")
        return report
    slack_outbox.record_answer(connection.pk, None, now)
    return report
