"""A held verdict's Slack message survives a dead worker: real PostgreSQL, Redis, worker
processes, and the suite's Slack Web API server, MAGI's slack_sdk client posting to it.

The server records the first chat.postMessage but holds its answer until the test has
SIGKILLed the worker posting it; another worker takes the row over once the lease (the
one every background job uses, judgements/models/leases.py) runs out, and posts it once
more: never lost, one copy more at most.
"""

import pytest
from django.contrib.auth import get_user_model

from judgements.models import Judgement, Membership, Panel, SlackConnection, SlackMessage, Team
from tests.support.cases import case_for
from tests.support.services import ALIAS, create_judgement, wait_for
from tests.support.slack_requests import BOT_TOKEN, CHANNEL, SIGNING_SECRET
from tests.support.slack_server import SlackServer


@pytest.fixture
def slack():
    server = SlackServer(hold_first=True)
    yield server
    server.stop()


def held_in_slack_team(fake_llm) -> Judgement:
    """A queued judgement of a panel of a team connected to Slack, asking to be held; its
    third agent votes against the other two, so the worker's verdict is contested and held."""
    users = get_user_model().objects.db_manager(ALIAS)
    ana, bob = (users.create(username=n, email=f"{n}@example.com") for n in ("ana", "bob"))
    team = Team.objects.using(ALIAS).create(name="Payments")
    Membership.objects.using(ALIAS).bulk_create(Membership(team=team, user=u) for u in (ana, bob))
    panel = Panel.objects.using(ALIAS).create(
        name="Refunds", owner=ana, team=team, agents=case_for()["agents"], team_reviews=True
    )
    SlackConnection.objects.using(ALIAS).create(
        team=team, bot_token=BOT_TOKEN, signing_secret=SIGNING_SECRET, channel=CHANNEL
    )
    fake_llm.script("model-c", votes="RRR")
    judgement = create_judgement(creator=ana)
    Judgement.objects.using(ALIAS).filter(pk=judgement.pk).update(
        panel=panel, team=team, hold_contested=True
    )
    return judgement


def test_a_message_whose_worker_is_killed_is_posted_again_once_by_another(
    processes, fake_llm, slack
):
    env = {"MAGI_SLACK_API_URL": slack.url, "MAGI_SITE_URL": "https://magi.example.com"}
    judgement = held_in_slack_team(fake_llm)

    first = processes.worker("first", **env)
    assert slack.first_arrived.wait(timeout=60), first.log()
    first.kill()
    held = SlackMessage.objects.using(ALIAS).get(judgement_id=judgement.pk)
    assert held.status == "pending" and held.lease_owner  # the dead worker still holds it
    slack.gate.set()  # the message it posted stays in Slack: a copy will follow

    second = processes.worker("second", **env)
    wait_for(
        lambda: SlackMessage.objects.using(ALIAS).get(pk=held.pk).status == "posted",
        60,
        f"the second worker to post the message:\n{second.log()[-3000:]}",
    )
    second.wait_logged("pending -> posted", 10, "the second worker to log the move")
    posted = SlackMessage.objects.using(ALIAS).get(pk=held.pk)
    assert posted.lease_owner == "" and posted.error == "" and posted.ts
    calls = slack.calls("chat.postMessage")
    assert len(calls) == 2
    assert calls[0].params["blocks"] == calls[1].params["blocks"]
    assert f"by worker {held.lease_owner}" not in second.log()
