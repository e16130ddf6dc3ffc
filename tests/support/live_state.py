"""The configuration the live-state tests tamper with, made the audited ways and placed
in the log, and `manage.py audit verify --all` as the attacker's auditor runs it
(tests/judgements/configuration/test_live_state.py, test_deletions.py)."""

import io
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection

from judgements.configuration import (
    budget_config,
    change_request,
    panel_config,
    people,
    team_config,
)
from judgements.configuration.panel_fields import PanelFields
from judgements.models import Team
from tests.support.api_client import TokenClient
from tests.support.audit_history import placed
from tests.support.cases import case_for


def configured() -> SimpleNamespace:
    """A staff user and a maker, two teams, the maker's token given to one of them, a
    panel of that team and a budget of the team's, each made the one audited way and
    placed in the log."""
    staff = people.create_user(None, "ops", "ops@example.com", is_staff=True)
    maker = people.create_user(staff, "maker", "maker@example.com")
    team = team_config.create(staff, {"name": "Payments", "members": ["maker", "ops"]})
    other = team_config.create(staff, {"name": "Growth", "members": ["ops"]})
    token = people.issue_token(staff, "maker", "ci", "Payments").token
    body: PanelFields = {"name": "Deploy gate", "agents": case_for()["agents"]}
    panel = panel_config.create(change_request.Change(by=staff, team=team), body).panel
    budget = budget_config.create(
        staff,
        {
            "team": "Payments", "user": None, "panel": None, "panel_team": None,
            "period": "day", "limit_usd": 5, "limit_tokens": None,
        },
    )  # fmt: skip
    placed()
    return SimpleNamespace(
        staff=staff, maker=maker, team=team, other=other, token=token, panel=panel,
        budget=budget,
    )  # fmt: skip


def api_client(user: User, team: Team | None = None) -> TokenClient:
    """A client carrying a token of `user`'s (a `team`'s, when given) issued the audited
    way, as `manage.py api_token` issues one: a token no audit row made is named."""
    name = None if team is None else team.name
    return TokenClient(f"Bearer {people.issue_token(None, user.get_username(), 'tests', name).key}")


def sql(statement: str, *params: int | str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def verified() -> tuple[object, str]:
    """`manage.py audit verify --all`: its exit code and every problem it names."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("audit", "verify", "--all", stdout=out, stderr=err)
    return exited.value.code, err.getvalue()


def changed(what: str, pk: int, model: str) -> str:
    return (
        f"TAMPERED: {what} {pk} differs from its last audited state: it was changed "
        f"outside MAGI ({model})"
    )


def gone(what: str, pk: int, model: str) -> str:
    return f"TAMPERED: {what} {pk} is gone: it was changed outside MAGI ({model})"


def assert_named(problem: str) -> None:
    code, err = verified()
    assert code == 1, "the change went unnoticed"
    assert problem in err, err


def assert_clean() -> None:
    """What MAGI did is placed in the log and checks clean."""
    placed()
    assert verified() == (0, "")
