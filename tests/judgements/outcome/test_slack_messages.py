"""A held verdict as Slack shows it (judgements/outcome/slack_messages.py): what it says
while it waits and once decided, untrusted text kept literal, and the override's modal."""

import json

import pytest
from asgiref.sync import async_to_sync

from judgements.engine.runner import EngineRunner
from judgements.models import Judgement, Panel, Trust
from judgements.outcome import overrides, slack_messages
from tests.support.slack_team import slack_team

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def held(fake_llm, make_judgement):
    return slack_team().held(make_judgement, fake_llm, title="Refund <!here> & more")


def test_mrkdwn_control_characters_are_escaped_and_long_text_cut():
    assert (
        slack_messages.escaped("<@U1> & <https://evil|ok>")
        == "&lt;@U1&gt; &amp; &lt;https://evil|ok&gt;"
    )
    assert slack_messages.cut("x" * 10, 5) == "xxxx…"


def test_an_override_puts_the_other_side_of_the_panels_verdict_in_force(held):
    assert slack_messages.other_decision(held) == "reject"
    view = slack_messages.override_view(
        held, {"judgement": held.pk, "channel": "C1", "ts": "1.2"}
    ).to_dict()

    assert json.loads(view["private_metadata"]) == {
        "judgement": held.pk,
        "channel": "C1",
        "ts": "1.2",
    }
    assert (
        "The panel said *Approved* on “Refund &lt;!here&gt; &amp; more”"
        in view["blocks"][0]["text"]["text"]
    )
    assert "puts *Rejected* in force" in view["blocks"][0]["text"]["text"]
    assert view["blocks"][1]["element"]["max_length"] == 3000


def test_once_overridden_the_message_says_who_decided_what_and_loses_its_buttons(held):
    overrides.override(held.pk, held.panel.reviewers.get(username="bob"), "reject", "Paid <twice>.")
    judgement = Judgement.objects.with_results().get(pk=held.pk)
    message, shows_review = slack_messages.held_message(judgement)

    assert shows_review
    blocks = [block.to_dict() for block in message["blocks"]]
    assert [b for b in blocks if b["type"] == "actions"] == []
    last = blocks[-1]["text"]["text"]
    assert last.startswith("*Overridden* by bob at ")
    assert "Rejected is in force (the panel said Approved). Reason: Paid &lt;twice&gt;." in last


def test_a_verdict_held_for_unmeasured_trust_says_so(held):
    Judgement.objects.filter(pk=held.pk).update(
        contest_reasons=[], trust=Trust.UNMEASURED, hold_unmeasured=True
    )
    why = slack_messages.why_held(Judgement.objects.get(pk=held.pk))
    assert why == ["Its trust is not measured, and its panel holds such verdicts."]


def test_a_later_level_says_what_the_levels_before_it_decided(fake_llm, make_judgement):
    setup = slack_team()
    strong = Panel.objects.create(
        name="Strong", owner=setup.people["ana"], team=setup.team, agents=setup.panel.agents
    )
    Panel.objects.filter(pk=setup.panel.pk).update(escalate_to=strong)
    fake_llm.script("model-c", votes="RRR")
    first = make_judgement(
        creator=setup.people["ana"], panel="Refunds", agents=None, hold_contested=True
    )
    assert async_to_sync(EngineRunner().run_judgement)(first.pk)
    second = Judgement.objects.get(root=first)
    assert async_to_sync(EngineRunner().run_judgement)(second.pk)

    why = slack_messages.why_held(Judgement.objects.get(pk=second.pk))
    assert why[-1].startswith("Level 1 (Refunds) said Approved and escalated: ")
