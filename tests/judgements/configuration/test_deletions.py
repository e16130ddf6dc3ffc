"""configuration/deletions.py: every way to delete configuration leaves the audit rows
`manage.py audit verify` needs to find the live configuration as the log says: a budget
deleted through the API, the admin, or with the team it belongs to; a team's panel and
token theirs alone again; a user who leaves a team and a panel's reviewers. No command
deletes a budget, a team or a user (`manage.py team`, `user`, `api_token` make and
change). And a budget deleted behind MAGI's back is named."""

import pytest
from asgiref.sync import async_to_sync
from django.urls import reverse

from judgements.configuration import budget_config, teams
from judgements.models import Budget
from tests.support import live_state
from tests.support.live_state import assert_clean, gone, sql

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def configured(fake_llm):
    return live_state.configured()


def api_delete(user, path: str) -> int:
    client = live_state.api_client(user)
    return async_to_sync(client.delete)(path, headers={"If-Match": "*"}).status_code


def test_a_budget_deleted_behind_magis_back_is_named(configured):
    sql("DELETE FROM judgements_budget WHERE id = %s", configured.budget.pk)
    live_state.assert_named(gone("budget", configured.budget.pk, "Budget"))


def test_a_budget_deleted_through_the_api_checks_clean(configured):
    assert api_delete(configured.staff, f"/api/budgets/{configured.budget.pk}/") == 204
    assert_clean()


def test_a_team_deleted_through_the_api_audits_its_budget_panel_and_token(configured):
    """Its budget goes with it; its panel and token are theirs alone again."""
    assert api_delete(configured.staff, f"/api/teams/{configured.team.pk}/") == 204
    assert not Budget.objects.filter(pk=configured.budget.pk).exists()
    assert_clean()


def test_a_panel_deleted_through_the_api_audits_its_budget(configured):
    panel_budget = budget_config.create(
        configured.staff,
        {
            "team": None, "user": None, "panel": configured.panel.pk, "panel_team": None,
            "period": "day", "limit_usd": None, "limit_tokens": 9,
        },
    )  # fmt: skip
    assert api_delete(configured.staff, f"/api/panels/{configured.panel.pk}/") == 204
    assert not Budget.objects.filter(pk=panel_budget.pk).exists()
    assert_clean()


def test_a_budget_deleted_in_the_admin_checks_clean(configured, admin_client):
    url = reverse("admin:judgements_budget_delete", args=[configured.budget.pk])
    assert admin_client.post(url, {"post": "yes"}).status_code == 302
    assert_clean()


def test_a_team_deleted_in_the_admin_audits_its_budget_panel_and_token(configured, admin_client):
    url = reverse("admin:judgements_team_delete", args=[configured.team.pk])
    assert admin_client.post(url, {"post": "yes"}).status_code == 302
    assert_clean()


def test_a_user_deleted_in_the_admin_audits_their_teams_and_the_panels_they_reviewed(
    configured, admin_client
):
    teams.set_reviewing(configured.panel, configured.staff, reviewers=[configured.maker])
    url = reverse("admin:auth_user_delete", args=[configured.maker.pk])
    assert admin_client.post(url, {"post": "yes"}).status_code == 302
    assert_clean()
