"""A story's next level as intake starts it (judgements/intake/escalation.py): the same
content judged by the panel the level escalates to, with that panel's agents, only when
the level did not keep its verdict and the chain's rule still allows the next panel."""

import pytest

from judgements.intake import escalation
from judgements.models import Judgement, Panel, Team, Trust

pytestmark = pytest.mark.django_db


@pytest.fixture
def level_one(make_panel, make_judgement) -> Judgement:
    """A judgement of "Cheap", which escalates to "Strong" (its own models)."""
    cheap = make_panel(name="Cheap")
    strong = make_panel(name="Strong", models=["model-c", "model-b", "model-a"])
    Panel.objects.filter(pk=cheap.pk).update(escalate_to=strong)
    made = make_judgement(panel="Cheap", agents=None, title="Refund", content="Pay it back")
    return Judgement.objects.select_related("panel").get(pk=made.pk)


def test_a_level_that_did_not_keep_its_verdict_starts_the_next_panel_on_the_same_content(
    level_one,
):
    following = escalation.next_level(level_one, escalation.Outcome(Trust.CONTESTED, True))
    assert following is not None
    assert following.panel.name == "Strong"
    assert following.level_of == level_one
    assert (following.case.title, following.case.content) == ("Refund", "Pay it back")
    assert following.case.panel == following.panel
    assert following.case.models() == ["model-c", "model-b", "model-a"]


def test_a_kept_verdict_starts_no_next_level(level_one):
    kept = escalation.Outcome(Trust.NOT_CONTESTED, False)
    assert escalation.next_level(level_one, kept) is None


def test_a_next_panel_the_level_may_no_longer_use_ends_the_story_there(level_one):
    Panel.objects.filter(name="Strong").update(team=Team.objects.create(name="Elsewhere"))
    contested = escalation.Outcome(Trust.CONTESTED, True)
    assert escalation.next_level(level_one, contested) is None


def test_a_level_asks_the_checks_of_any_judgement_without_a_cascade_certificate(level_one):
    following = escalation.next_level(level_one, escalation.Outcome(Trust.CONTESTED, True))
    assert following is not None
    assert escalation.checks_asked(following.case, level_one.panel, 2) is None
