"""configuration/live_state.py: `manage.py audit verify` names the configuration changed
behind MAGI's back by someone who can write the database (not the signing key): a
panel's criteria, a team's name, a token handed to another user or team, a user's email,
each one way per test, on SQLite. tests/judgements/audit/test_verification.py does the
same for budgets and the judgements' own history."""

import io

import pytest
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import transaction
from django.test import Client
from django.urls import reverse

from judgements.audit import log
from judgements.configuration import budget_config, people, teams
from judgements.core.settings_read import GroupSetting
from judgements.identity.people import Person, follow_groups, grants_for, sign_in
from judgements.identity.provider import SignInRefused
from judgements.models import (
    ApiToken,
    AuditEntry,
    AuditSubject,
    Budget,
    EntryKind,
    LogState,
    Panel,
    Team,
)
from judgements.models.panels import PanelState
from tests.support import live_state
from tests.support.audit_history import placed
from tests.support.live_state import assert_clean, changed, sql, verified

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def configured(fake_llm):
    return live_state.configured()


def assert_named(what: str, pk: int, model: str) -> None:
    live_state.assert_named(changed(what, pk, model))


def test_untouched_configuration_checks_clean(configured):
    assert verified() == (0, "")


def test_each_kinds_audit_rows_hold_its_named_states_keys_in_its_order(configured):
    """The TypedDict of each kind's state says the keys of its rows in the transparency
    log, in the order their hashes were taken over them."""
    shapes = {
        AuditSubject.PANEL: PanelState,
        AuditSubject.BUDGET: budget_config.BudgetState,
        AuditSubject.TEAM: teams.TeamState,
        AuditSubject.USER: people.UserState,
        AuditSubject.TOKEN: people.TokenState,
    }
    for subject, shape in shapes.items():
        afters = list(AuditEntry.objects.filter(subject=subject).values_list("after", flat=True))
        assert afters, subject
        keys = [list(after or {}) for after in afters]
        assert keys == [list(shape.__annotations__)] * len(afters)


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


@pytest.mark.parametrize("column", ["is_staff", "is_superuser"])
def test_a_user_made_staff_or_superuser_is_named(configured, column):
    sql(f"UPDATE auth_user SET {column} = TRUE WHERE id = %s", configured.maker.pk)
    assert_named("user", configured.maker.pk, "User")


def test_a_user_disabled_in_the_admin_and_enabled_again_behind_magis_back_is_named(
    configured, admin_client
):
    """A disabled user's tokens stop working (ApiToken.active): enabling them again in the
    database gives them back."""
    form = {"username": "maker", "email": "maker@example.com"}
    form |= {"date_joined_0": "2026-01-01", "date_joined_1": "00:00:00"}
    url = reverse("admin:auth_user_change", args=[configured.maker.pk])
    assert admin_client.post(url, form).status_code == 302
    assert_clean()
    sql("UPDATE auth_user SET is_active = TRUE WHERE id = %s", configured.maker.pk)
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


ISSUER = "https://idp.example.com/realms/acme"
REVIEWERS: dict[str, GroupSetting] = {"payments-review": {"team": "Payments", "role": "reviewer"}}


def signed_in(settings, *groups: str) -> User:
    """A sign-in of the provider account `rev-1` with these groups, as the callback makes it."""
    settings.MAGI_OIDC_GROUPS = REVIEWERS
    person = Person(ISSUER, "rev-1", "rev@example.com", False, "Rev Iewer", groups)
    return sign_in(person)


def test_a_team_wide_reviewer_given_by_a_sign_ins_groups_checks_clean(configured, settings):
    reviewer = signed_in(settings, "payments-review")
    assert teams.all_panel_reviewers(configured.team) == [reviewer.get_username()]
    assert_clean()


def test_a_team_wide_reviewer_added_behind_magis_back_is_named(configured):
    sql(
        "UPDATE judgements_membership SET reviews_all = TRUE WHERE team_id = %s AND user_id = %s",
        configured.team.pk,
        configured.maker.pk,
    )
    assert_named("team", configured.team.pk, "Team")


def test_a_team_wide_reviewer_dropped_behind_magis_back_is_named(configured, settings):
    signed_in(settings, "payments-review")
    assert_clean()
    sql(
        "UPDATE judgements_membership SET reviews_all = FALSE WHERE team_id = %s",
        configured.team.pk,
    )
    assert_named("team", configured.team.pk, "Team")


def test_a_reviewer_who_loses_the_group_or_leaves_the_team_checks_clean(configured, settings):
    reviewer = signed_in(settings, "payments-review")
    with pytest.raises(SignInRefused):
        signed_in(settings)  # in no mapped group now: the provider's roles go
    assert teams.all_panel_reviewers(configured.team) == []
    assert_clean()
    signed_in(settings, "payments-review")
    teams.remove_members(configured.team, [reviewer], configured.staff)  # manage.py team remove
    assert_clean()


def test_a_provider_account_pointed_at_another_user_is_named(configured, settings):
    """Whoever holds the account at the provider would sign in as staff."""
    signed_in(settings, "payments-review")
    assert_clean()
    sql("UPDATE judgements_identity SET user_id = %s", configured.staff.pk)
    assert_named("user", configured.staff.pk, "User")


def test_a_user_made_by_a_sign_in_is_compared(configured, settings):
    reviewer = signed_in(settings, "payments-review")
    assert_clean()
    sql("UPDATE auth_user SET email = 'attacker@example.net' WHERE id = %s", reviewer.pk)
    assert_named("user", reviewer.pk, "User")


def test_a_token_added_with_a_known_key_is_named(configured):
    """Every way to make a token is audited: one with no audit row, made after the log
    started, was written into the database by someone who knows its key."""
    sql(
        "INSERT INTO judgements_apitoken (user_id, name, prefix, key_hash, created_at) "
        "VALUES (%s, 'ci', 'magi_kno', %s, '2026-01-01')",
        configured.staff.pk,
        ApiToken.hash("magi_known"),
    )
    token = ApiToken.objects.get(key_hash=ApiToken.hash("magi_known"))
    live_state.assert_named(
        f"TAMPERED: token {token.pk} was added outside MAGI: no audit row made it (ApiToken)"
    )


def insert_user(configured) -> int:
    """A superuser with a password the attacker knows, written into auth_user: they sign
    in with it."""
    sql(
        "INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email,"
        " is_staff, is_active, date_joined) VALUES (%s, TRUE, 'mallory', '', '', '', TRUE, TRUE,"
        " '2026-01-01')",
        make_password("known"),
    )
    assert Client().login(username="mallory", password="known")
    return User.objects.get(username="mallory").pk


def insert_panel(configured) -> int:
    """A panel of the team's that approves everything, made past MAGI's functions."""
    agents = [dict(agent, criteria="Approve everything.") for agent in configured.panel.agents]
    return Panel.objects.create(name="Rubber stamp", team=configured.team, agents=agents).pk


def insert_budget(configured) -> int:
    return Budget.objects.bulk_create(
        [Budget(user=configured.maker, period="day", limit_usd=5000)]
    )[0].pk


def insert_team(configured) -> int:
    sql(
        "INSERT INTO judgements_team (name, created_at, version) VALUES ('Shadow', '2026-01-01', 1)"
    )
    return Team.objects.get(name="Shadow").pk


@pytest.mark.parametrize(
    ("insert", "named"),
    [
        (insert_user, "user {pk} was added outside MAGI: no audit row made it (User)"),
        (insert_panel, "panel {pk} was added outside MAGI: no audit row made it (Panel)"),
        (insert_budget, "budget {pk} was added outside MAGI: no audit row made it (Budget)"),
        (insert_team, "team {pk} was added outside MAGI: no audit row made it (Team)"),
    ],
    ids=["user by SQL", "panel by create()", "budget by bulk_create()", "team by SQL"],
)
def test_a_row_added_behind_magis_back_is_named(configured, insert, named):
    """Every way MAGI makes a user, panel, budget or team writes its audit row: one made
    after the log started with none was written into the database."""
    pk = insert(configured)
    live_state.assert_named(f"TAMPERED: {named.format(pk=pk)}")


NAMED_SINCE = ("user", "panel", "budget", "team")


def test_rows_added_to_a_log_whose_genesis_does_not_name_them_are_not_looked_for(fake_llm):
    """A log started before its genesis named the last user, panel, budget and team (by the
    release before): rows of theirs are not told from older ones, unaudited then, so none
    is named, and verify says which kinds it did not look for."""
    genesis = log.genesis()
    before = {name: last for name, last in genesis["before"].items() if name not in NAMED_SINCE}
    with transaction.atomic():  # as the old release's log.start
        LogState.objects.create(pk=log.LOG_ID, origin=log.new_origin())
        log.append(EntryKind.GENESIS, "log", {**genesis, "before": before})
    configured = live_state.configured()
    User.objects.create_user("older")  # as the old release's createsuperuser made them
    insert_team(configured)
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("audit", "verify", "--all", stdout=out, stderr=err)
    assert (exited.value.code, err.getvalue()) == (0, "")
    assert "not checked: users, panels, budgets, teams added outside MAGI" in out.getvalue()
