"""A team's Slack connection (judgements/configuration/slack_config.py): set and changed
with its secrets write-only, audited without them, and the test message against the
suite's Slack Web API server."""

import pytest

from judgements.configuration import slack_config
from judgements.core.errors import InvalidInput
from judgements.models import AuditEntry, AuditSubject, SlackConnection, Team
from tests.support.slack_requests import BOT_TOKEN, CHANNEL, SIGNING_SECRET, connect
from tests.support.slack_server import Scripted
from tests.support.slack_team import slack_team

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(db) -> Team:
    return Team.objects.create(name="Payments")


def test_a_connection_needs_both_secrets_the_first_time(team):
    with pytest.raises(InvalidInput) as refused:
        slack_config.save(None, team, {"channel": CHANNEL, "direct_messages": False})

    assert set(refused.value.errors) == {"bot_token", "signing_secret"}
    assert not SlackConnection.objects.exists()


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"channel": "#general", "direct_messages": False}, "channel"),
        ({"channel": "", "direct_messages": False}, "channel"),
        ({"channel": CHANNEL, "direct_messages": True}, "channel"),
        (
            {"channel": CHANNEL, "direct_messages": False, "bot_token": "xoxp-user-token"},
            "bot_token",
        ),
        (
            {"channel": CHANNEL, "direct_messages": False, "signing_secret": "has spaces in it"},
            "signing_secret",
        ),
    ],
    ids=[
        "a_channel_name",
        "no_channel",
        "a_channel_with_direct_messages",
        "a_user_token",
        "a_bad_secret",
    ],
)
def test_a_bad_field_is_named(team, fields, field):
    connect(team)
    with pytest.raises(InvalidInput) as refused:
        slack_config.save(None, team, fields)

    assert list(refused.value.errors) == [field]
    assert SlackConnection.objects.get().channel == CHANNEL


def test_secrets_left_out_stay_and_the_audit_keeps_only_their_fingerprints(team):
    connect(team)
    slack_config.save(None, team, {"channel": "", "direct_messages": True})

    stored = SlackConnection.objects.get()
    assert (stored.bot_token, stored.signing_secret, stored.direct_messages) == (
        BOT_TOKEN,
        SIGNING_SECRET,
        True,
    )
    entries = list(AuditEntry.objects.filter(subject=AuditSubject.SLACK).order_by("at", "pk"))
    assert [e.before is None for e in entries] == [True, False]
    changed = entries[1].after
    assert isinstance(changed, dict) and changed["direct_messages"] is True
    assert changed["bot_token"] == slack_config.fingerprint(BOT_TOKEN)
    for entry in entries:
        assert BOT_TOKEN not in str(entry.after) and SIGNING_SECRET not in str(entry.after)


def test_removing_it_is_audited(team):
    connect(team)
    assert slack_config.remove(None, team)
    assert not slack_config.remove(None, team)

    assert not SlackConnection.objects.exists()
    assert AuditEntry.objects.filter(subject=AuditSubject.SLACK, after__isnull=True).count() == 1


def test_the_test_message_goes_to_the_channel(team, slack_api):
    connect(team)
    report = slack_config.send_test(team)

    assert report.ok, report.lines
    (posted,) = slack_api.calls("chat.postMessage")
    assert posted.params["channel"] == CHANNEL and "Payments" in posted.params["text"]
    assert SlackConnection.objects.get().last_ok_at is not None


def test_with_direct_messages_the_test_reaches_each_reviewer_and_names_who_it_cannot(
    slack_api, fake_llm
):
    setup = slack_team(slack_api)
    slack_api.state.users.pop("U0CY")  # cy is not in the workspace
    connect(setup.team, direct_messages=True)
    report = slack_config.send_test(setup.team)

    assert not report.ok
    assert "cy: no Slack user with their email address." in report.lines
    assert sorted(c.params["channel"] for c in slack_api.calls("chat.postMessage")) == [
        "U0ANA",
        "U0BOB",
    ]


def test_a_revoked_token_fails_the_test_saying_so(team, slack_api):
    connect(team)
    slack_api.revoke(BOT_TOKEN)
    report = slack_config.send_test(team)

    assert not report.ok
    assert report.lines == ["Slack refused the bot token (invalid_auth): set a new one."]
    assert "invalid_auth" in SlackConnection.objects.get().last_error


def test_a_channel_the_bot_is_not_in_fails_the_test_saying_so(team, slack_api):
    connect(team)
    slack_api.script("chat.postMessage", Scripted(error="not_in_channel"))
    report = slack_config.send_test(team)

    assert not report.ok
    assert report.lines[-1] == "The bot is not in the channel (not_in_channel): invite it there."
