"""People from the provider's ID tokens: created or linked at the first sign-in, teams,
reviewing and staff following the groups at every sign-in, audited with the provider."""

import pytest
from django.contrib.auth.models import User

from judgements.configuration.teams import assign
from judgements.core.settings_read import GroupSetting
from judgements.identity.people import Person, grants_for, sign_in
from judgements.identity.provider import SignInRefused
from judgements.models import (
    AuditEntry,
    AuditSubject,
    Identity,
    Judgement,
    Membership,
    Panel,
    Status,
    Team,
)
from judgements.models.panels import reviewed_panels
from judgements.outcome import notifications, reviews
from tests.support.states import bring

ISSUER = "https://idp.example.com/realms/acme"
MAPPING: dict[str, GroupSetting] = {
    "fraud": {"team": "Fraud", "role": "member"},
    "fraud-reviewers": {"team": "Fraud", "role": "reviewer"},
    "admins": {"team": None, "role": "staff"},
}


@pytest.fixture(autouse=True)
def mapping(settings):
    settings.MAGI_OIDC_GROUPS = MAPPING


def person(*groups: str, email: str = "ann@example.com", verified: bool = True) -> Person:
    return Person(ISSUER, "sub-ann", email, verified, "Ann Example", groups)


def teams(user: User) -> list[str]:
    return sorted(user.teams.values_list("name", flat=True))


def test_a_reviewer_is_also_a_member_and_unmapped_groups_give_nothing():
    grants = grants_for(("fraud-reviewers", "marketing"), MAPPING)
    assert (grants.teams, grants.reviews, grants.staff) == ({"Fraud"}, {"Fraud"}, False)
    assert not grants_for(("marketing",), MAPPING).anything


def test_a_newcomer_is_created_from_the_email_and_name(db):
    user = sign_in(person("fraud"))
    assert (user.username, user.email, user.get_full_name()) == (
        "ann@example.com",
        "ann@example.com",
        "Ann Example",
    )
    assert not user.has_usable_password()
    assert teams(user) == ["Fraud"]
    assert Identity.objects.get(user=user).subject == "sub-ann"
    entry = AuditEntry.objects.get(subject=AuditSubject.MEMBERSHIP)
    assert (entry.by, entry.actor, entry.after) == (None, ISSUER, ["ann@example.com"])


def test_a_team_the_groups_name_is_made_the_one_audited_way(db):
    sign_in(person("fraud"))
    made = AuditEntry.objects.get(subject=AuditSubject.TEAM)
    assert (made.by, made.actor, made.before) == (None, ISSUER, None)
    assert made.after == {"name": "Fraud", "members": []}
    sign_in(person("fraud"))  # the team is there now: found, not made again
    assert AuditEntry.objects.filter(subject=AuditSubject.TEAM).count() == 1


def test_groups_are_followed_at_every_sign_in_and_each_change_audited(db):
    team = Team.objects.create(name="Fraud")
    panel = Panel.objects.create(name="p", team=team, agents=[])
    user = sign_in(person("fraud-reviewers"))
    assert panel.reviewed_by(user)
    sign_in(person("admins"))
    user.refresh_from_db()
    assert teams(user) == [] and user.is_staff
    assert not panel.reviewed_by(user)
    assert {entry.actor for entry in AuditEntry.objects.all()} == {ISSUER}
    assert AuditEntry.objects.filter(subject="staff", after=True).exists()
    # The user the first sign-in made: their first row says they were made by it.
    first = AuditEntry.objects.filter(subject=AuditSubject.USER).order_by("pk")[0]
    assert (first.target, first.before) == (f"user {user.pk}", None)


def test_a_team_no_group_maps_keeps_its_hand_made_members(db):
    sales = Team.objects.create(name="Sales")
    user = sign_in(person("fraud"))
    Membership.objects.create(team=sales, user=user)
    sign_in(person("fraud"))
    assert teams(user) == ["Fraud", "Sales"]


def test_no_mapped_group_is_refused_with_nothing_stored(db):
    with pytest.raises(SignInRefused, match="none of your groups"):
        sign_in(person("marketing"))
    assert not User.objects.exists() and not Identity.objects.exists()


def test_a_known_person_without_a_mapped_group_loses_the_teams_then_is_refused(db):
    user = sign_in(person("fraud"))
    with pytest.raises(SignInRefused):
        sign_in(person())
    assert teams(user) == []


def test_a_local_user_is_linked_only_when_the_email_is_verified(db):
    local = User.objects.create_user("ann", email="Ann@Example.com")
    with pytest.raises(SignInRefused, match="not say the address is verified"):
        sign_in(person("fraud", verified=False))
    assert not Identity.objects.exists() and teams(local) == []
    assert sign_in(person("fraud")) == local


def test_a_disabled_account_is_refused(db):
    user = sign_in(person("fraud"))
    User.objects.filter(pk=user.pk).update(is_active=False)
    with pytest.raises(SignInRefused, match="disabled"):
        sign_in(person("fraud"))


def test_a_superuser_keeps_staff_whatever_the_groups_say(db):
    root = User.objects.create_superuser("root", email="ann@example.com")
    assert sign_in(person("fraud")) == root
    root.refresh_from_db()
    assert root.is_staff and teams(root) == ["Fraud"]


def held_verdict(panel: Panel) -> Judgement:
    """A decided, contested and held judgement of the panel's, as the engine leaves it."""
    made = Judgement.objects.create(
        title="Refund 4711", content="x", panel=panel, team=panel.team, hold_contested=True
    )
    bring(Judgement.objects.filter(pk=made.pk), Status.APPROVED, contested=True)
    made.refresh_from_db()
    return made


def test_a_reviewer_reviews_panels_given_to_the_team_after_they_signed_in(db):
    team = Team.objects.create(name="Fraud")
    user = sign_in(person("fraud-reviewers"))
    made_later = Panel.objects.create(name="made later", team=team, agents=[])
    moved_later = Panel.objects.create(name="moved later", agents=[])
    assign(moved_later, team)
    for panel in (made_later, moved_later):
        judgement = held_verdict(panel)
        assert panel.reviewed_by(user)
        assert judgement in reviews.queue(user)
        assert notifications.reviewers_of(judgement) == [user]
    assert set(reviewed_panels(user)) == {made_later, moved_later}
    # The role ends with the group, on every panel, at the next sign-in.
    sign_in(person("fraud"))
    assert not reviewed_panels(user).exists() and not reviews.queue(user).exists()
    assert notifications.reviewers_of(held_verdict(made_later)) == []


def test_a_member_the_groups_do_not_make_a_reviewer_reviews_nothing(db):
    team = Team.objects.create(name="Fraud")
    user = sign_in(person("fraud"))
    panel = Panel.objects.create(name="p", team=team, agents=[])
    assert not panel.reviewed_by(user)
    assert notifications.reviewers_of(held_verdict(panel)) == []
    # A copy onto the panel (as sign-in made before the role lived on the membership)
    # goes at the next sign-in that does not give the role.
    panel.reviewers.add(user)
    sign_in(person("fraud"))
    assert list(panel.reviewers.all()) == []
    entry = AuditEntry.objects.filter(subject="reviewers", target__startswith="panel").get()
    assert entry.before is not None and entry.after is not None
    assert (entry.before["reviewers"], entry.after["reviewers"]) == (["ann@example.com"], [])
