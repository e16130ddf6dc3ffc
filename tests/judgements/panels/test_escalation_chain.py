"""An escalation chain's rules (judgements/panels/escalation_chain.py): which panel a
panel may escalate to (its team's, or its owner's outside a team, or an example), a chain
followed to its end and refused when it comes back to a panel, and which decided
verdicts a level keeps."""

import pytest
from django.contrib.auth import get_user_model

from judgements.core.errors import InvalidInput
from judgements.models import Panel, Team, Trust
from judgements.panels import escalation_chain

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(db):
    users = get_user_model().objects
    return users.create_user("ana"), users.create_user("eve")


def panel(name, owner=None, team=None, escalate_to=None) -> Panel:
    agents = [{"name": n, "model": "model-a", "criteria": "c"} for n in ("A", "B", "C")]
    return Panel.objects.create(
        name=name, owner=owner, team=team, agents=agents, escalate_to=escalate_to
    )


def test_a_team_panel_may_escalate_to_the_team_s_panels_and_the_examples(people):
    ana, eve = people
    payments, other = Team.objects.create(name="Payments"), Team.objects.create(name="Other")
    cheap = panel("Cheap", ana, payments)
    assert escalation_chain.may_escalate(cheap, panel("Strong", ana, payments))
    assert escalation_chain.may_escalate(cheap, panel("Example"))
    assert not escalation_chain.may_escalate(cheap, panel("Theirs", ana, other))
    assert not escalation_chain.may_escalate(cheap, panel("Ana's own", ana))
    assert not escalation_chain.may_escalate(cheap, cheap)
    assert "The team Payments may not use" in escalation_chain.refusal(
        cheap, panel("X", eve, other)
    )


def test_a_panel_outside_a_team_may_escalate_to_its_owner_s_own_and_the_examples(people):
    ana, eve = people
    mine = panel("Mine", ana)
    assert escalation_chain.may_escalate(mine, panel("Also mine", ana))
    assert escalation_chain.may_escalate(mine, panel("Example"))
    assert not escalation_chain.may_escalate(mine, panel("Eve's", eve))
    assert not escalation_chain.may_escalate(
        mine, panel("Team's", ana, Team.objects.create(name="T"))
    )


def test_a_chain_is_followed_to_its_end_and_refused_when_it_comes_back(people):
    ana, _ = people
    third = panel("Third", ana)
    second = panel("Second", ana, escalate_to=third)
    first = panel("First", ana, escalate_to=second)
    assert escalation_chain.levels_after(first) == [second, third]
    assert escalation_chain.levels_after(third) == []
    Panel.objects.filter(pk=third.pk).update(escalate_to=first)
    with pytest.raises(escalation_chain.CycleError, match="comes back to 'First'"):
        escalation_chain.chain_after(first, second)
    with pytest.raises(InvalidInput) as refused:
        escalation_chain.levels_after(first)
    assert list(refused.value.errors) == ["panel"]


def test_a_chain_whose_later_level_moved_to_another_team_is_refused_naming_the_panel(people):
    ana, _ = people
    team = Team.objects.create(name="Payments")
    last = panel("Last", ana, team)
    middle = panel("Middle", ana, team, escalate_to=last)
    first = panel("First", ana, team, escalate_to=middle)
    assert escalation_chain.target_errors(first, middle) == []
    Panel.objects.filter(pk=last.pk).update(team=Team.objects.create(name="Elsewhere"))
    errors = escalation_chain.target_errors(first, middle)
    assert errors and "'Middle' escalates to 'Last'" in errors[0]
    with pytest.raises(InvalidInput):
        escalation_chain.levels_after(first)


def test_a_chain_has_at_most_max_levels(people):
    ana, _ = people
    following = None
    for n in range(escalation_chain.MAX_LEVELS + 1):
        following = panel(f"P{n}", ana, escalate_to=following)
    assert following is not None
    assert "at most" in escalation_chain.target_errors(following, following.escalate_to)[0]


@pytest.mark.parametrize(
    ("trust", "contested", "hold_unmeasured", "kept"),
    [
        (Trust.NOT_CONTESTED, False, False, True),
        (Trust.NOT_CONTESTED, False, True, True),
        (Trust.CONTESTED, True, False, False),
        (Trust.CONTESTED, True, True, False),
        (Trust.UNMEASURED, False, False, True),
        (Trust.UNMEASURED, False, True, False),
    ],
)
def test_a_level_keeps_what_would_not_wait_for_a_person(trust, contested, hold_unmeasured, kept):
    assert escalation_chain.keeps(trust, contested, hold_unmeasured) is kept
