"""Teams and reviewers (judgements/configuration/teams.py): who is in a team and who reviews a
panel change only through here, audited; a panel's reviewers get its contested
judgements whoever submitted them, and four eyes keeps an author off their own."""

import pytest
from django.contrib.auth import get_user_model

from judgements.configuration import teams
from judgements.core.errors import InvalidInput
from judgements.intake.start import Submission, submit
from judgements.models import (
    ApiToken,
    AuditEntry,
    AuditSubject,
    Judgement,
    Panel,
    Status,
    Team,
)
from judgements.outcome import overrides, reviews
from tests.support.cases import case_for, validated
from tests.support.states import bring

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(db):
    users = get_user_model().objects
    return {name: users.create_user(name, password="pw") for name in ("ana", "bob", "bot", "eve")}


@pytest.fixture
def team(people):
    team = Team.objects.create(name="Payments")
    teams.set_members(team, [people["ana"], people["bob"], people["bot"]], None)
    return team


@pytest.fixture
def panel(team, people):
    return Panel.objects.create(
        name="Refunds", owner=people["ana"], team=team, agents=case_for()["agents"]
    )


def contested_judgement(fake_llm, settings, by, panel: Panel) -> Judgement:
    """A judgement of the panel's, submitted by `by` through a team token, decided and
    contested (as the engine would leave it)."""
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    token, _ = ApiToken.issue(by, "deploy")
    case = {**case_for(), "panel": panel.name, "agents": None}
    case = {key: value for key, value in case.items() if value is not None}
    judgement = submit([validated(case)], Submission(creator=by, api_token=token)).judgement
    bring(Judgement.objects.filter(pk=judgement.pk), Status.APPROVED, contested=True)
    return Judgement.objects.get(pk=judgement.pk)


def test_membership_changes_are_audited_with_who_before_and_after(team, people):
    teams.add_members(team, [people["eve"]], people["ana"])
    teams.remove_members(team, [people["bob"]], people["ana"])
    entries = list(AuditEntry.objects.filter(subject=AuditSubject.MEMBERSHIP).order_by("pk"))
    assert [(e.by, e.before, e.after) for e in entries[-2:]] == [
        (people["ana"], ["ana", "bob", "bot"], ["ana", "bob", "bot", "eve"]),
        (people["ana"], ["ana", "bob", "bot", "eve"], ["ana", "bot", "eve"]),
    ]
    assert entries[-1].target == f"team {team.pk} (Payments)"


def test_a_change_that_changes_nothing_is_not_recorded(team, people):
    count = AuditEntry.objects.count()
    teams.add_members(team, [people["ana"]], people["ana"])
    assert AuditEntry.objects.count() == count


def test_a_reviewer_must_be_in_the_panel_s_team(panel, people):
    with pytest.raises(InvalidInput) as refused:
        teams.set_reviewing(panel, people["ana"], reviewers=[people["eve"]])
    assert refused.value.errors == {"reviewers": ["Not in the team Payments: eve."]}
    assert not AuditEntry.objects.filter(subject=AuditSubject.REVIEWERS).exists()


def test_a_panel_without_a_team_has_no_reviewers(people):
    lone = Panel.objects.create(name="Mine", owner=people["eve"], agents=case_for()["agents"])
    with pytest.raises(InvalidInput) as refused:
        teams.set_reviewing(lone, people["eve"], team_reviews=True)
    assert list(refused.value.errors) == ["team"]


def test_reviewer_changes_are_audited(panel, people):
    teams.set_reviewing(panel, people["ana"], reviewers=[people["bob"]], four_eyes=True)
    entry = AuditEntry.objects.get(subject=AuditSubject.REVIEWERS)
    assert entry.by == people["ana"]
    assert entry.before == {
        "team": "Payments", "reviewers": [], "team_reviews": False, "four_eyes": False
    }  # fmt: skip
    assert entry.after == {
        "team": "Payments", "reviewers": ["bob"], "team_reviews": False, "four_eyes": True
    }  # fmt: skip


def test_a_bot_s_contested_judgement_reaches_the_panel_s_reviewer(
    fake_llm, settings, panel, people
):
    teams.set_reviewing(panel, people["ana"], reviewers=[people["bob"]])
    judgement = contested_judgement(fake_llm, settings, people["bot"], panel)
    bob = people["bob"]
    assert not bob.is_staff
    assert list(reviews.queue(bob)) == [judgement]
    assert overrides.may_override(bob) and overrides.may_override(bob, judgement)
    reviews.confirm(judgement.pk, bob, "Checked the refund by hand.")
    assert Judgement.objects.get(pk=judgement.pk).reviewed


def test_a_member_who_is_not_a_reviewer_sees_but_may_not_review(fake_llm, settings, panel, people):
    teams.set_reviewing(panel, people["ana"], reviewers=[people["bob"]])
    judgement = contested_judgement(fake_llm, settings, people["bot"], panel)
    ana = people["ana"]
    assert judgement.visible_to(ana)
    assert list(reviews.queue(ana)) == []
    assert not overrides.may_override(ana) and not overrides.may_override(ana, judgement)


def test_the_whole_team_reviews_when_the_panel_says_so(fake_llm, settings, panel, people):
    teams.set_reviewing(panel, people["ana"], team_reviews=True)
    judgement = contested_judgement(fake_llm, settings, people["bot"], panel)
    assert list(reviews.queue(people["ana"])) == [judgement]
    assert list(reviews.queue(people["eve"])) == []


def test_four_eyes_keeps_the_author_off_their_own_judgement(fake_llm, settings, panel, people):
    teams.set_reviewing(panel, people["ana"], team_reviews=True, four_eyes=True)
    judgement = contested_judgement(fake_llm, settings, people["bob"], panel)
    assert list(reviews.queue(people["bob"])) == []
    assert not overrides.may_override(people["bob"], judgement)
    assert overrides.may_override(people["ana"], judgement)


def test_four_eyes_holds_for_staff_too(fake_llm, settings, panel, people):
    teams.set_reviewing(panel, people["ana"], four_eyes=True)
    people["bob"].is_staff = True
    people["bob"].save()
    judgement = contested_judgement(fake_llm, settings, people["bob"], panel)
    assert not overrides.may_override(people["bob"], judgement)
    assert judgement not in reviews.queue(people["bob"])


def test_a_reviewer_who_leaves_the_team_stops_reviewing(fake_llm, settings, panel, people):
    teams.set_reviewing(panel, people["ana"], reviewers=[people["bob"]])
    judgement = contested_judgement(fake_llm, settings, people["bot"], panel)
    teams.remove_members(panel.team, [people["bob"]], people["ana"])
    assert list(reviews.queue(people["bob"])) == []
    assert not overrides.may_override(people["bob"], judgement)
    assert not judgement.visible_to(people["bob"])
