"""Teams and a panel's reviewers in the admin: changed through judgements/configuration/teams.py,
so the audit says who changed what; the audit itself cannot be edited."""

import pytest
from django.contrib.auth import get_user_model

from judgements.configuration import teams
from judgements.models import AuditEntry, AuditSubject, Panel, Team
from tests.support.cases import case_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(db):
    make = get_user_model().objects.create_user
    return {name: make(name, password="pw") for name in ("ana", "bob")}


def test_members_changed_in_the_admin_are_audited(admin_client, people):
    team = Team.objects.create(name="Payments")
    response = admin_client.post(
        f"/admin/judgements/team/{team.pk}/change/",
        {"name": "Payments", "people": [people["ana"].pk, people["bob"].pk]},
    )
    assert response.status_code == 302
    entry = AuditEntry.objects.get(subject=AuditSubject.MEMBERSHIP)
    assert entry.by is not None
    assert (entry.by.username, entry.before, entry.after) == ("root", [], ["ana", "bob"])
    page = admin_client.get(f"/admin/judgements/auditentry/{entry.pk}/change/")
    assert page.status_code == 200 and b"Team membership" in page.content


def test_a_team_made_in_the_admin_is_made_the_one_audited_way(admin_client, people):
    response = admin_client.post(
        "/admin/judgements/team/add/", {"name": "Payments", "people": [people["ana"].pk]}
    )
    assert response.status_code == 302
    team = Team.objects.get(name="Payments")
    made = AuditEntry.objects.get(subject=AuditSubject.TEAM)
    assert made.by is not None and made.by.username == "root"
    assert (made.target, made.before) == (f"team {team.pk} (Payments)", None)
    assert teams.member_names(team) == ["ana"]


def test_reviewers_changed_in_the_admin_are_audited_and_must_be_members(admin_client, people):
    team = Team.objects.create(name="Payments")
    teams.set_members(team, [people["ana"]], None)
    panel = Panel.objects.create(name="Refunds", owner=people["ana"], agents=case_for()["agents"])
    url = f"/admin/judgements/panel/{panel.pk}/change/"
    refused = admin_client.post(url, {"team": team.pk, "reviewers": [people["bob"].pk]})
    assert refused.status_code == 200
    assert b"Not in the team Payments: bob." in refused.content
    saved = admin_client.post(
        url, {"team": team.pk, "reviewers": [people["ana"].pk], "four_eyes": "on"}
    )
    assert saved.status_code == 302
    entry = AuditEntry.objects.get(subject=AuditSubject.REVIEWERS)
    assert entry.after == {
        "team": "Payments", "reviewers": ["ana"], "team_reviews": False, "four_eyes": True
    }  # fmt: skip
    assert entry.before == {
        "team": None, "reviewers": [], "team_reviews": False, "four_eyes": False
    }  # fmt: skip


def test_the_audit_cannot_be_edited(admin_client, people):
    team = Team.objects.create(name="Payments")
    teams.set_members(team, [people["ana"]], people["ana"])
    entry = AuditEntry.objects.get(subject=AuditSubject.MEMBERSHIP)
    response = admin_client.post(
        f"/admin/judgements/auditentry/{entry.pk}/change/", {"target": "forged"}
    )
    assert response.status_code == 403
    assert AuditEntry.objects.get(pk=entry.pk).target.startswith("team ")


def test_staff_who_are_not_superusers_read_only_their_teams_in_the_admin(client, people, db):
    from django.contrib.auth.models import Permission

    payments, support = Team.objects.create(name="Payments"), Team.objects.create(name="Support")
    teams.set_members(payments, [people["ana"]], None)
    teams.set_members(support, [people["bob"]], None)
    for who, team in ((people["ana"], payments), (people["bob"], support)):
        Panel.objects.create(
            name=f"{team.name} panel", owner=who, team=team, agents=case_for()["agents"]
        )
    ana = people["ana"]
    ana.is_staff = True
    ana.save()
    ana.user_permissions.set(Permission.objects.filter(codename__startswith="view_"))
    client.force_login(ana)
    listed = client.get("/admin/judgements/panel/")
    assert b"Payments panel" in listed.content
    assert b"Support panel" not in listed.content
    assert client.get("/admin/judgements/team/").content.count(b"Support") == 0
