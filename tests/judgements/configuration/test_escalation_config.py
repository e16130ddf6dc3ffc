"""The panel a saved panel escalates to, as a page, the API and a directory name it
(judgements/configuration/escalation_config.py): by id or name among the panels its team
may use, each refusal in words that say why, and the page's field beside its error."""

import pytest
from django.contrib.auth import get_user_model

from judgements.configuration import escalation_config
from judgements.models import Panel, Team

pytestmark = pytest.mark.django_db


def panel(name, owner=None, team=None) -> Panel:
    agents = [{"name": n, "model": "model-a", "criteria": "c"} for n in ("A", "B", "C")]
    return Panel.objects.create(name=name, owner=owner, team=team, agents=agents)


@pytest.fixture
def ana(db):
    return get_user_model().objects.create_user("ana")


def test_it_names_a_panel_of_the_team_by_name_or_id(ana):
    team = Team.objects.create(name="Payments")
    strong = panel("Strong gate", ana, team)
    for reference in ("strong  GATE", strong.pk, str(strong.pk)):
        found, wrong = escalation_config.resolve(reference, ana, owner=ana, team=team, panel=None)
        assert (found, wrong) == (strong, [])
    assert escalation_config.resolve(None, ana, owner=ana, team=team, panel=None) == (None, [])


def test_it_refuses_a_panel_the_team_may_not_use_and_one_that_is_not_there(ana):
    team = Team.objects.create(name="Payments")
    mine = panel("Mine", ana)
    found, wrong = escalation_config.resolve("Mine", ana, owner=ana, team=team, panel=None)
    assert found == mine and "The team Payments may not use the panel 'Mine'" in wrong[0]
    found, wrong = escalation_config.resolve("Nowhere", ana, owner=ana, team=team, panel=None)
    assert found is None and wrong == ["No panel 'Nowhere' that this panel's team may use."]


def test_it_refuses_a_panel_escalating_to_itself(ana):
    cheap = panel("Cheap", ana)
    _, wrong = escalation_config.resolve(cheap.pk, ana, owner=ana, team=None, panel=cheap)
    assert wrong == ["A panel cannot escalate to itself."]


def test_the_candidates_are_the_team_s_then_the_examples(ana):
    team = Team.objects.create(name="Payments")
    ours, example = panel("Ours", ana, team), panel("Example")
    panel("Mine", ana)
    assert escalation_config.candidates(ana, team) == [ours, example]
    assert escalation_config.candidates(ana, None) == [Panel.objects.get(name="Mine"), example]
