"""Who may use a shared row (judgements/models/policy.py): staff, its maker and the members
of its team, asked the same way by every model, and the querysets' conditions agreeing with
the row-level answers for every kind of user."""

import pytest
from django.contrib.auth.models import User

from judgements.evaluations import suites
from judgements.models import EvaluationRun, Judgement, Membership, Panel, Team, policy
from judgements.models.policy import in_team, may_use
from tests.support.certificates import marked
from tests.support.evaluations import SUITE, start

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(django_user_model) -> dict[str, User]:
    team = Team.objects.create(name="Payments")
    found = {
        name: django_user_model.objects.create_user(name, password="x", is_staff=name == "staff")
        for name in ("maker", "member", "outsider", "staff")
    }
    Membership.objects.create(team=team, user=found["member"])
    Membership.objects.create(team=team, user=found["maker"])
    return found


def test_in_team_is_membership_of_the_row_s_team(people):
    team = Team.objects.get()
    assert in_team(people["member"], team.pk)
    assert not in_team(people["outsider"], team.pk)
    # A row of no team is nobody's team's.
    assert not in_team(people["member"], None)


def test_may_use_lets_staff_the_maker_and_the_team_in(people):
    team = Team.objects.get()
    maker = people["maker"]
    assert may_use(people["staff"], maker.pk, None)
    assert may_use(maker, maker.pk, None)
    assert may_use(people["member"], maker.pk, team.pk)
    assert not may_use(people["member"], maker.pk, None)
    assert not may_use(people["outsider"], maker.pk, team.pk)
    # A row with no maker is not everyone's.
    assert not may_use(people["outsider"], None, None)


def test_every_model_s_queryset_agrees_with_its_rows(people, make_judgement, make_panel):
    team = Team.objects.get()
    maker = people["maker"]
    own = make_judgement(creator=maker)
    shared = marked(make_judgement(creator=maker))
    Judgement.objects.filter(pk=shared.pk).update(team=team)
    panel = make_panel(owner=maker)
    team_panel = make_panel(name="Team desk", owner=maker)
    Panel.objects.filter(pk=team_panel.pk).update(team=team)
    example = make_panel(name="Shipped", owner=None)
    suite = suites.import_suite(name="Gate cases", description="", owner=maker, data=SUITE)
    run = start(suite, maker)
    team_run = start(suite, maker)
    EvaluationRun.objects.filter(pk=team_run.pk).update(team=team)
    for user in people.values():
        for judgement in (own, shared):
            row = Judgement.objects.get(pk=judgement.pk)
            found = Judgement.objects.visible_to(user).filter(pk=row.pk).exists()
            assert row.visible_to(user) == found, ("judgement", user, row.pk)
        for saved in (panel, team_panel, example):
            row_panel = Panel.objects.get(pk=saved.pk)
            found = Panel.objects.visible_to(user).filter(pk=saved.pk).exists()
            assert row_panel.visible_to(user) == found, ("panel", user, saved.pk)
        for started in (run, team_run):
            row_run = EvaluationRun.objects.get(pk=started.pk)
            found = EvaluationRun.objects.visible_to(user).filter(pk=started.pk).exists()
            assert row_run.visible_to(user) == found, ("run", user, started.pk)
    outsider, member = people["outsider"], people["member"]
    assert not Judgement.objects.get(pk=shared.pk).visible_to(outsider)
    assert Judgement.objects.get(pk=shared.pk).visible_to(member)
    assert Panel.objects.get(pk=team_panel.pk).editable_by(member)
    assert not Panel.objects.get(pk=example.pk).editable_by(member)
    assert Panel.objects.get(pk=example.pk).visible_to(outsider)


def test_a_user_sees_the_teams_they_are_in_and_staff_every_team(people):
    Team.objects.create(name="Another")
    teams = Team.objects.order_by("name")
    assert [t.name for t in policy.teams_visible(teams, people["member"])] == ["Payments"]
    assert list(policy.teams_visible(teams, people["outsider"])) == []
    assert [t.name for t in policy.teams_visible(teams, people["staff"])] == ["Another", "Payments"]
