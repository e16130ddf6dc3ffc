"""Held verdicts posted to Slack and kept up to date (judgements/outcome/slack_outbox.py,
slack_messages.py): MAGI's real slack_sdk client against the suite's Slack Web API server
on 127.0.0.1, scripted to rate limit, fail and revoke the token."""

from datetime import timedelta

import pytest
from django.utils import timezone

from judgements.models import SlackConnection, SlackMessage, SlackMessageStatus
from judgements.outcome import reviews, slack_outbox
from tests.support.slack_requests import BOT_TOKEN, CHANNEL, connect
from tests.support.slack_server import Scripted
from tests.support.slack_team import SLACK_IDS, slack_team

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def setup(slack_api, fake_llm):
    return slack_team(slack_api)


def texts(blocks: list[dict]) -> str:
    """Every text of the blocks, one after another: what a reader of the message sees."""
    found: list[str] = []
    for block in blocks:
        for part in [block.get("text"), *block.get("fields", []), *block.get("elements", [])]:
            if isinstance(part, dict):
                text = part.get("text")
                found.append(text if isinstance(text, str) else str(part))
    return "\n".join(found)


def action_ids(blocks: list[dict]) -> list[str]:
    return [e["action_id"] for b in blocks if b["type"] == "actions" for e in b["elements"]]


def test_a_held_verdict_is_posted_once_with_what_a_reviewer_needs(
    setup, slack_api, make_judgement, fake_llm
):
    fake_llm.script("model-b", reason="Refund <@U0BOSS> & <!channel> allowed")
    connect(setup.team)
    judgement = setup.held(make_judgement, fake_llm, title="Refund 4711 <b>")

    assert slack_outbox.deliver("w1") == 1
    assert slack_outbox.deliver("w1") == 0  # posted once: nothing more due

    (call,) = slack_api.calls("chat.postMessage")
    assert call.token == BOT_TOKEN and call.params["channel"] == CHANNEL
    blocks = call.params["blocks"]
    seen = texts(blocks)
    assert blocks[0] == {
        "type": "header",
        "text": {"type": "plain_text", "text": "Held for review: Refund 4711 <b>", "emoji": False},
    }
    assert "*Panel*\nRefunds" in seen and "*The panel's verdict*\nApproved" in seen
    assert "*Why it is held*" in seen and judgement.contest_reasons[0] in seen
    for agent in judgement.agents.all():
        assert f"*{agent.name}*: {agent.get_final_decision_display()}." in seen
    # A model's words cannot mention, broadcast or link: Slack's three characters escaped.
    assert "Refund &lt;@U0BOSS&gt; &amp; &lt;!channel&gt; allowed" in seen
    page = f"https://magi.example.com/judgements/{judgement.pk}/"
    assert f"<{page}|Open judgement {judgement.pk} in MAGI>" in seen
    assert action_ids(blocks) == ["magi_confirm", "magi_override"]
    buttons = next(b for b in blocks if b["type"] == "actions")["elements"]
    assert {button["value"] for button in buttons} == {str(judgement.pk)}
    row = SlackMessage.objects.get(judgement=judgement)
    assert (row.status, row.channel, row.ts, row.shows_review) == (
        "posted",
        CHANNEL,
        "1.000100",
        False,
    )
    assert row.lease_owner == "" and row.error == ""


def test_a_429_waits_as_long_as_retry_after_says(setup, slack_api, make_judgement, fake_llm):
    connect(setup.team)
    judgement = setup.held(make_judgement, fake_llm)
    slack_api.script("chat.postMessage", Scripted(status=429, retry_after=120))
    before = timezone.now()

    slack_outbox.deliver("w1")
    row = SlackMessage.objects.get(judgement=judgement)
    assert row.status == SlackMessageStatus.PENDING and "429" in row.error
    assert (
        before + timedelta(seconds=119)
        <= row.next_attempt_at
        <= timezone.now() + timedelta(seconds=121)
    )
    slack_outbox.deliver("w1")
    assert len(slack_api.calls("chat.postMessage")) == 1  # not before Slack said

    SlackMessage.objects.filter(pk=row.pk).update(next_attempt_at=timezone.now())  # 120 s on
    slack_outbox.deliver("w1")
    assert len(slack_api.calls("chat.postMessage")) == 2
    assert SlackMessage.objects.get(pk=row.pk).status == SlackMessageStatus.POSTED


def test_a_failing_slack_is_tried_again_after_the_backoff_until_the_attempts_run_out(
    setup, slack_api, make_judgement, fake_llm, settings
):
    settings.MAGI_SLACK_MAX_ATTEMPTS = 2
    settings.MAGI_WEBHOOK_RETRY_INITIAL_WAIT = 0.0
    connect(setup.team)
    judgement = setup.held(make_judgement, fake_llm)
    slack_api.script("chat.postMessage", Scripted(status=500), Scripted(error="internal_error"))

    slack_outbox.deliver("w1")
    row = SlackMessage.objects.get(judgement=judgement)
    assert (row.status, row.attempts) == ("pending", 1) and "HTTP 500" in row.error
    slack_outbox.deliver("w1")
    row = SlackMessage.objects.get(judgement=judgement)
    assert (row.status, row.attempts) == ("failed", 2) and "internal_error" in row.error
    assert SlackConnection.objects.get().last_error == ""  # a retry might have mended it


def test_a_token_slack_revoked_gives_up_at_once_and_shows_on_the_teams_page(
    setup, slack_api, make_judgement, fake_llm, client
):
    connect(setup.team)
    judgement = setup.held(make_judgement, fake_llm)
    slack_api.revoke(BOT_TOKEN)

    slack_outbox.deliver("w1")
    row = SlackMessage.objects.get(judgement=judgement)
    assert row.status == SlackMessageStatus.FAILED and "invalid_auth" in row.error
    client.force_login(setup.people["dan"])
    page = client.get(f"/teams/{setup.team.pk}/slack/").content.decode()
    assert "Slack refused the bot token (invalid_auth): set a new one." in page
    assert BOT_TOKEN not in page


def test_a_new_token_takes_up_again_what_the_revoked_one_failed(
    setup, slack_api, make_judgement, fake_llm
):
    connect(setup.team)
    unposted = setup.held(make_judgement, fake_llm, title="Refund 1")
    posted = setup.held(make_judgement, fake_llm, title="Refund 2")
    slack_outbox.queue()
    SlackMessage.objects.filter(judgement=unposted).update(
        next_attempt_at=timezone.now() + timedelta(hours=1)
    )
    slack_outbox.deliver("w1")  # Refund 2 posted
    reviews.confirm(posted.pk, setup.people["bob"], "Seen.")
    SlackMessage.objects.filter(judgement=unposted).update(next_attempt_at=timezone.now())
    slack_api.revoke(BOT_TOKEN)
    slack_outbox.deliver("w1")  # both refused: the post and the update
    assert set(SlackMessage.objects.values_list("status", flat=True)) == {"failed"}

    connect(setup.team, token="xoxb-3333-4444-rotated")
    assert SlackConnection.objects.get().last_error == ""
    slack_outbox.deliver("w1")

    states = dict(SlackMessage.objects.values_list("judgement_id", "status"))
    assert states == {unposted.pk: "posted", posted.pk: "posted"}
    fresh = [c for c in slack_api.calls() if c.token == "xoxb-3333-4444-rotated"]
    assert sorted(c.method for c in fresh) == ["chat.postMessage", "chat.update"]


def test_direct_messages_go_to_each_reviewer_but_its_author(
    setup, slack_api, make_judgement, fake_llm
):
    connect(setup.team, direct_messages=True)
    judgement = setup.held(make_judgement, fake_llm)  # ana's: four eyes leaves her out

    slack_outbox.deliver("w1")
    posted = sorted(call.params["channel"] for call in slack_api.calls("chat.postMessage"))
    assert posted == [SLACK_IDS["bob"], SLACK_IDS["cy"]]
    rows = SlackMessage.objects.filter(judgement=judgement).order_by("recipient__username")
    assert [(str(r.recipient), r.channel) for r in rows] == [("bob", "DU0BOB"), ("cy", "DU0CY")]


def test_a_review_on_the_page_updates_the_message_in_place_once(
    setup, slack_api, make_judgement, fake_llm, client
):
    connect(setup.team)
    judgement = setup.held(make_judgement, fake_llm)
    slack_outbox.deliver("w1")
    client.force_login(setup.people["bob"])
    response = client.post(
        f"/judgements/{judgement.pk}/confirm/", {"confirm-reason": "Checked the receipt."}
    )
    assert response.status_code == 302

    slack_outbox.deliver("w1")
    slack_outbox.deliver("w1")
    (update,) = slack_api.calls("chat.update")
    assert (update.params["channel"], update.params["ts"]) == (CHANNEL, "1.000100")
    assert action_ids(update.params["blocks"]) == []
    assert "*Confirmed* by bob at" in texts(update.params["blocks"])
    row = SlackMessage.objects.get(judgement=judgement)
    assert (row.status, row.shows_review) == ("posted", True)


def test_a_verdict_reviewed_before_it_was_posted_is_not_posted(
    setup, slack_api, make_judgement, fake_llm
):
    connect(setup.team)
    judgement = setup.held(make_judgement, fake_llm)
    slack_outbox.queue()
    reviews.confirm(judgement.pk, setup.people["bob"], "Looked before Slack did.")

    slack_outbox.deliver("w1")
    assert slack_api.calls("chat.postMessage") == []
    assert SlackMessage.objects.get(judgement=judgement).status == SlackMessageStatus.DROPPED


def test_a_team_without_slack_posts_nothing(setup, slack_api, make_judgement, fake_llm):
    setup.held(make_judgement, fake_llm)
    assert slack_outbox.deliver("w1") == 0
    assert slack_api.calls() == [] and not SlackMessage.objects.exists()
