"""configuration/assignment.py: `manage.py team assign` gives a panel, a suite or a token
to a team with an audit row saying the team before and after, so `audit verify` finds
the change in the log and still checks clean."""

import io

import pytest
from django.core.management import call_command

from judgements.configuration import change_request, panel_config, people, team_config
from judgements.configuration.panel_fields import PanelFields
from judgements.models import AuditEntry, AuditSubject
from tests.support.audit_history import placed
from tests.support.cases import case_for

pytestmark = pytest.mark.django_db(transaction=True)


def verified() -> tuple[object, str]:
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("audit", "verify", "--all", stdout=out, stderr=err)
    return exited.value.code, err.getvalue()


def assign(*args: str) -> None:
    with pytest.raises(SystemExit) as exited:
        call_command("team", "assign", *args, stdout=io.StringIO(), stderr=io.StringIO())
    assert exited.value.code == 0


def test_a_token_given_to_a_team_is_audited_and_checks_clean(fake_llm):
    staff = people.create_user(None, "ops", "ops@example.com", is_staff=True)
    team_config.create(staff, {"name": "Growth", "members": ["ops"]})
    token = people.issue_token(staff, "ops", "ci", None).token
    assign("Growth", "--token", str(token.pk))
    row = AuditEntry.objects.get(subject=AuditSubject.TOKEN, target=f"token {token.pk}", by=None)
    assert [(state or {}).get("team") for state in (row.before, row.after)] == [None, "Growth"]
    placed()
    assert verified() == (0, "")


def test_a_panel_given_to_another_team_is_audited_and_checks_clean(fake_llm):
    staff = people.create_user(None, "ops", "ops@example.com", is_staff=True)
    payments = team_config.create(staff, {"name": "Payments", "members": ["ops"]})
    team_config.create(staff, {"name": "Growth", "members": ["ops"]})
    body: PanelFields = {"name": "Deploy gate", "agents": case_for()["agents"]}
    panel = panel_config.create(change_request.Change(by=staff, team=payments), body).panel
    assign("Growth", "--panel", str(panel.pk))
    row = AuditEntry.objects.filter(subject=AuditSubject.PANEL, by=None).get()
    assert [(state or {}).get("team") for state in (row.before, row.after)] == [
        "Payments",
        "Growth",
    ]
    placed()
    assert verified() == (0, "")
