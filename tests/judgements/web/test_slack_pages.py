"""A team's Slack page (judgements/web/slack_pages.py): set by its members and staff,
its secrets never shown back, bad input named next to its field."""

import pytest
from django.contrib.auth.models import User

from judgements.models import SlackConnection, Team
from tests.support.slack_requests import BOT_TOKEN, CHANNEL, SIGNING_SECRET, connect
from tests.support.slack_team import team_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(db) -> Team:
    return team_of("ana")


@pytest.fixture
def ana(client, team):
    client.force_login(User.objects.get(username="ana"))
    return client


def test_a_member_connects_the_team_and_the_secrets_are_not_shown_back(ana, team, settings):
    settings.MAGI_SITE_URL = "https://magi.example.com"
    response = ana.post(
        f"/teams/{team.pk}/slack/",
        {"channel": CHANNEL, "bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET},
    )
    assert response.status_code == 302

    page = ana.get(f"/teams/{team.pk}/slack/").content.decode()
    assert f"held verdicts go to the channel {CHANNEL}" in page
    assert BOT_TOKEN not in page and SIGNING_SECRET not in page
    assert "https://magi.example.com/slack/interactivity/" in page
    assert "users:read.email" in page  # the manifest
    assert SlackConnection.objects.get().bot_token == BOT_TOKEN


def test_a_bad_channel_is_said_next_to_its_field_and_nothing_is_saved(ana, team):
    response = ana.post(
        f"/teams/{team.pk}/slack/",
        {"channel": "#payments", "bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET},
    )

    assert response.status_code == 400
    page = response.content.decode()
    assert 'id="id_channel_error"' in page and "Must be a channel&#x27;s ID" in page
    assert BOT_TOKEN not in page
    assert not SlackConnection.objects.exists()


def test_someone_outside_the_team_finds_no_page(client, team):
    connect(team)
    client.force_login(User.objects.create_user("eve", password="pw"))

    assert client.get(f"/teams/{team.pk}/slack/").status_code == 404
    assert client.post(f"/teams/{team.pk}/slack/remove/").status_code == 404
    assert SlackConnection.objects.exists()


def test_the_test_button_shows_what_slack_said(ana, team, slack_api):
    connect(team)
    slack_api.revoke(BOT_TOKEN)
    page = ana.post(f"/teams/{team.pk}/slack/test/").content.decode()

    assert "The test failed" in page
    assert "Slack refused the bot token (invalid_auth): set a new one." in page


def test_disconnecting_removes_the_connection(ana, team):
    connect(team)
    assert ana.post(f"/teams/{team.pk}/slack/remove/").status_code == 302
    assert not SlackConnection.objects.exists()
    assert "Not connected to Slack." in ana.get(f"/teams/{team.pk}/slack/").content.decode()


def test_the_notifications_page_links_each_of_ones_teams_slack_page(ana, team):
    Team.objects.create(name="Travel")  # not ana's
    connect(team)
    page = ana.get("/account/notifications/").content.decode()

    assert f'<a href="/teams/{team.pk}/slack/">Payments</a>: connected' in page
    assert "Travel" not in page
