"""A panel's verdict as the answers carry it (judgements/outcome/verdict_answers.py): each
agent's rounds as the engine stored them, and the mark in words, the same for a level of
a story as for the answer's top."""

import pytest
from asgiref.sync import async_to_sync

from judgements.engine.runner import EngineRunner
from judgements.models import Judgement, Trust
from judgements.outcome.verdict_answers import agents_of, trust_words

pytestmark = pytest.mark.django_db(transaction=True)


def test_each_agent_carries_its_rounds_and_how_each_vote_changed(fake_llm, make_judgement):
    fake_llm.script("model-c", votes="RAA")  # Casper turns to the others' vote in round 2
    judgement = make_judgement()
    assert async_to_sync(EngineRunner().run_judgement)(judgement.pk)
    agents = agents_of(Judgement.objects.with_results().get(pk=judgement.pk))
    assert [agent.name for agent in agents] == ["Melchior", "Balthasar", "Casper"]
    casper = agents[2]
    assert [r.decision for r in casper.rounds] == ["reject", "approve", "approve"]
    assert [(r.changed, r.with_majority) for r in casper.rounds] == [
        (False, None),
        (True, True),
        (False, True),
    ]
    assert casper.final_decision == "approve" and casper.score == 0.9  # 0.4 + 0.5


def test_the_mark_in_words_says_what_a_user_may_rely_on(make_judgement):
    judgement = make_judgement()
    assert trust_words(judgement) is None  # undecided: no mark yet
    judgement.trust = Trust.CONTESTED
    assert trust_words(judgement) == "Contested"
    judgement.trust = Trust.UNMEASURED
    words = trust_words(judgement) or ""
    assert words.startswith("Trust not measured for this panel: no certificate holds")
