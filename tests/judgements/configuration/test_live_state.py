"""configuration/live_state.py: `manage.py audit verify` names the configuration changed
behind MAGI's back by someone who can write the database (not the signing key): a
panel's criteria, a team's name, a token handed to another user or team, a user's email,
each one way per test, on SQLite. tests/judgements/audit/test_verification.py does the
same for budgets and the judgements' own history."""

import io
from types import SimpleNamespace

import pytest
from django.core.management import call_command
from django.db import connection

from judgements.configuration import panel_config, people, team_config, teams
from judgements.configuration.panel_fields import PanelFields
from judgements.identity.people import GroupSetting, follow_groups, grants_for
from judgements.models import ApiToken, AuditSubject, Panel
from tests.support.audit_history import placed
from tests.support.cases import case_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def configured(fake_llm):
    """A staff user and a maker, two teams, the maker's token given to one of them and a
    panel of that team, each made the one audited way and placed in the log."""
    staff = people.create_user(None, "ops", "ops@example.com", is_staff=True)
    maker = people.create_user(staff, "maker", "maker@example.com")
    team = team_config.create(staff, {"name": "Payments", "members": ["maker", "ops"]})
    other = team_config.create(staff, {"name": "Growth", "members": ["ops"]})
    token = people.issue_token(staff, "maker", "ci", "Payments").token
    body: PanelFields = {"name": "Deploy gate", "agents": case_for()["agents"]}
    panel = panel_config.create(panel_config.Change(by=staff, team=team), body).panel
    placed()
    return SimpleNamespace(
        staff=staff, maker=maker, team=team, other=other, token=token, panel=panel
    )


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


def assert_named(what: str, pk: int, model: str) -> None:
    code, err = verified()
    assert code == 1, "the change went unnoticed"
    assert changed(what, pk, model) in err, err


def test_untouched_configuration_checks_clean(configured):
    assert verified() == (0, "")


def test_a_panels_criteria_edited_are_named(configured):
    panel = configured.panel
    agents = [dict(agent) for agent in panel.agents]
    agents[0]["criteria"] = "Approve everything."
    Panel.objects.filter(pk=panel.pk).update(agents=agents)
    assert_named("panel", panel.pk, "Panel")


def test_a_teams_name_edited_is_named(configured):
    sql("UPDATE judgements_team SET name = 'Treasury' WHERE id = %s", configured.team.pk)
    assert_named("team", configured.team.pk, "Team")


@pytest.mark.parametrize("column", ["user_id", "team_id"])
def test_a_token_handed_to_another_user_or_team_is_named(configured, column):
    other = configured.staff if column == "user_id" else configured.other
    sql(
        f"UPDATE judgements_apitoken SET {column} = %s WHERE id = %s", other.pk, configured.token.pk
    )
    assert_named("token", configured.token.pk, "ApiToken")


def test_a_users_email_edited_is_named(configured):
    sql("UPDATE auth_user SET email = 'attacker@example.net' WHERE id = %s", configured.maker.pk)
    assert_named("user", configured.maker.pk, "User")


def test_a_user_made_staff_is_named(configured):
    sql("UPDATE auth_user SET is_staff = TRUE WHERE id = %s", configured.maker.pk)
    assert_named("user", configured.maker.pk, "User")


def test_a_user_made_staff_through_magi_checks_clean(configured):
    people.set_staff(configured.staff, "maker", True)
    placed()
    assert verified() == (0, "")


def test_a_reviewer_added_to_a_panel_is_named(configured):
    sql(
        "INSERT INTO judgements_panel_reviewers (panel_id, user_id) VALUES (%s, %s)",
        configured.panel.pk,
        configured.maker.pk,
    )
    assert_named("panel", configured.panel.pk, "Panel")


def test_reviewers_set_through_magi_check_clean(configured):
    """A panel's reviewing is audited apart from the panel (subject `reviewers`): its rows
    amend the panel's last audited state."""
    teams.set_reviewing(configured.panel, configured.staff, reviewers=[configured.maker])
    teams.set_reviewing(configured.panel, configured.staff, four_eyes=True)
    placed()
    assert verified() == (0, "")
    sql("UPDATE judgements_panel SET four_eyes = FALSE WHERE id = %s", configured.panel.pk)
    assert changed("panel", configured.panel.pk, "Panel") in verified()[1]


def test_staff_given_by_a_sign_ins_groups_checks_clean(configured):
    """A sign-in's groups audit the staff role apart (subject `staff`): its rows amend the
    user's last audited state."""
    mapping: dict[str, GroupSetting] = {"admins": {"team": None, "role": "staff"}}
    grants = grants_for(("admins",), mapping)
    follow_groups(configured.maker, grants, mapping, "https://idp.example.com/realms/acme")
    placed()
    assert verified() == (0, "")


def test_a_tokens_key_hash_swapped_for_a_known_key_is_named(configured):
    """The attacker's own key, its hash written over the token's: the key now works as
    the token, and audit verify names the token."""
    known = "magi_attacker-knows-this-key"
    sql(
        "UPDATE judgements_apitoken SET key_hash = %s WHERE id = %s",
        ApiToken.hash(known),
        configured.token.pk,
    )
    assert ApiToken.active(known) == configured.token
    assert_named("token", configured.token.pk, "ApiToken")


def test_a_revocation_undone_is_named(configured, client):
    """Revoked on the tokens page (audited), then made to work again in the database."""
    client.force_login(configured.maker)
    assert client.post(f"/tokens/{configured.token.pk}/revoke/").status_code == 302
    placed()
    assert verified() == (0, "")
    sql("UPDATE judgements_apitoken SET revoked_at = NULL WHERE id = %s", configured.token.pk)
    assert_named("token", configured.token.pk, "ApiToken")


def test_a_token_made_on_the_tokens_page_is_audited_with_its_key_hash(configured, client):
    client.force_login(configured.maker)
    assert client.post("/tokens/", {"name": "laptop"}).status_code == 200
    token = ApiToken.objects.get(name="laptop")
    placed()
    assert verified() == (0, "")
    sql("UPDATE judgements_apitoken SET key_hash = %s WHERE id = %s", "0" * 64, token.pk)
    assert_named("token", token.pk, "ApiToken")


def test_a_token_audited_before_its_key_hash_was_checks_clean(configured):
    """A token's last row from before the key hash was audited carries no `key_hash`:
    only the fields it carries are compared, so the old token is not named for it."""
    token = people.issue_token(configured.staff, "maker", "old", None).token
    state = people.token_state(token)
    old = {name: state[name] for name in ("user", "name", "team", "prefix")}
    teams.record(AuditSubject.TOKEN, f"token {token.pk}", configured.staff, state, old)
    placed()
    assert verified() == (0, "")
