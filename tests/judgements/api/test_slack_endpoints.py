"""A team's Slack connection over the API (judgements/api/slack_endpoints.py): write-only
secrets, field paths in every refusal, other teams not found."""

import json

import pytest
from django.contrib.auth.models import User

from judgements.models import SlackConnection, Team
from tests.support.api_client import token_client
from tests.support.slack_requests import BOT_TOKEN, CHANNEL, SIGNING_SECRET
from tests.support.slack_team import team_of

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def team(db) -> Team:
    return team_of("ana")


@pytest.fixture
def ana(team):
    return token_client(User.objects.get(username="ana"))


@pytest.fixture
def eve(db):
    return token_client(User.objects.create_user("eve", password="pw"))


async def put(client, team_id: int, body: dict):
    return await client.put(
        f"/api/teams/{team_id}/slack", json.dumps(body), content_type="application/json"
    )


async def test_a_member_connects_the_team_and_never_reads_the_secrets_back(ana, team, settings):
    settings.MAGI_SITE_URL = "https://magi.example.com"
    body = {"channel": CHANNEL, "bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET}
    written = await put(ana, team.pk, body)
    assert written.status_code == 200, written.json()
    read = await ana.get(f"/api/teams/{team.pk}/slack")

    assert read.json() == {
        "team": "Payments",
        "channel": CHANNEL,
        "direct_messages": False,
        "bot_token_set": True,
        "signing_secret_set": True,
        "interactivity_url": "https://magi.example.com/slack/interactivity/",
        "last_ok_at": None,
        "last_error": "",
        "last_error_at": None,
    }
    assert BOT_TOKEN not in written.content.decode() + read.content.decode()
    changed = await put(ana, team.pk, {"channel": "", "direct_messages": True})
    assert changed.status_code == 200 and changed.json()["direct_messages"] is True
    assert (await SlackConnection.objects.aget()).bot_token == BOT_TOKEN


async def test_the_first_connection_without_secrets_names_both_fields(ana, team):
    response = await put(ana, team.pk, {"channel": CHANNEL})

    assert response.status_code == 422
    assert set(response.json()["errors"]) == {"bot_token", "signing_secret"}


async def test_a_field_of_the_wrong_type_is_named(ana, team):
    response = await put(ana, team.pk, {"channel": CHANNEL, "direct_messages": "yes"})

    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["direct_messages"]


async def test_another_team_is_not_found(team, eve):
    response = await put(
        eve, team.pk, {"channel": CHANNEL, "bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET}
    )

    assert response.status_code == 404
    assert (await eve.get(f"/api/teams/{team.pk}/slack")).status_code == 404
    assert not await SlackConnection.objects.aexists()


async def test_disconnecting_and_testing_over_the_api(ana, team, slack_api):
    await put(
        ana, team.pk, {"channel": CHANNEL, "bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET}
    )
    tested = await ana.post(f"/api/teams/{team.pk}/slack/test")
    assert tested.status_code == 200 and tested.json()["ok"] is True

    assert (await ana.delete(f"/api/teams/{team.pk}/slack")).status_code == 204
    assert (await ana.get(f"/api/teams/{team.pk}/slack")).status_code == 404
    assert (await ana.delete(f"/api/teams/{team.pk}/slack")).status_code == 404
