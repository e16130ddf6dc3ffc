"""Rows with an id below 1 (issue 70): MAGI's own tables refuse them (a database
constraint each, models/choices.py ids_from_one); in Django's users, groups and
permissions, which MAGI does not own, `audit verify` names them (audit/coverage.py
ids_below_one), and the API answers them without a 500."""

import pytest
from django.apps import apps
from django.contrib.auth.models import Group, User
from django.db import IntegrityError, connection, transaction
from django.test import Client

from judgements.audit import verification
from judgements.configuration import live_state
from judgements.models import ApiToken
from tests.support.audit_history import with_a_budget
from tests.support.live_state import sql

pytestmark = pytest.mark.django_db(transaction=True)

# MAGI's tables a row with id 0 could not matter in, left unconstrained: the log's one
# state row (id 1), its stored subtrees (keyed by place), a user's notification choice and
# the webhook secrets (read by their user, never listed by id).
UNCONSTRAINED = {"logstate", "lognode", "notificationchoice", "webhooksecret"}


@pytest.fixture
def history(fake_llm, settings):
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    settings.MAGI_UNFINISHED_PER_USER = 0
    return with_a_budget(2)


def problems() -> list[str]:
    trust = verification.trust_beside_the_data()
    report = verification.verify(trust, None, [live_state.differences])
    return [str(problem) for problem in report.problems]


def magi_tables() -> list[str]:
    models = apps.get_app_config("judgements").get_models()
    return sorted(
        model._meta.db_table
        for model in models
        if model._meta.model_name not in UNCONSTRAINED and not model._meta.auto_created
    )


def test_every_table_of_magis_holds_the_constraint(db):
    with connection.cursor() as cursor:
        for table in magi_tables():
            names = connection.introspection.get_constraints(cursor, table)
            assert any(name.endswith("_id_from_one") for name in names), table


@pytest.mark.parametrize(
    "table",
    ["judgements_judgement", "judgements_agent", "judgements_rounddecision",
     "judgements_llmattempt", "judgements_override", "judgements_auditentry",
     "judgements_chainentry", "judgements_receipt", "judgements_checkpoint",
     "judgements_team", "judgements_membership", "judgements_budget", "judgements_apitoken"],
)  # fmt: skip
@pytest.mark.parametrize("planted", [0, -1])
def test_a_row_of_magis_cannot_be_given_an_id_below_1(history, table, planted):
    ApiToken.issue(User.objects.get(username="maker-w1"), "ci")
    with pytest.raises(IntegrityError), transaction.atomic():
        sql(f"UPDATE {table} SET id = %s WHERE id = (SELECT MAX(id) FROM {table})", planted)


@pytest.mark.parametrize("planted", [0, -1])
def test_a_superuser_with_an_id_below_1_is_named(history, planted):
    sql(
        "INSERT INTO auth_user (id, password, is_superuser, username, first_name, last_name, "
        "email, is_staff, is_active, date_joined) VALUES (%s, 'x', %s, 'root', '', '', '', %s, "
        "%s, CURRENT_TIMESTAMP)",
        planted, True, True, True,
    )  # fmt: skip
    found = problems()
    assert (
        f"user {planted} has an id below 1, which no row MAGI makes has: it was written into "
        "the database outside MAGI (auth_user)" in found
    ), found


@pytest.mark.parametrize("planted", [0, -1])
def test_a_group_and_its_member_with_ids_below_1_are_named(history, planted):
    Group.objects.create(name="admins")
    sql("UPDATE auth_group SET id = %s", planted)
    member = User.objects.get(username="maker-w1")
    sql(
        "INSERT INTO auth_user_groups (id, user_id, group_id) VALUES (%s, %s, %s)",
        planted, member.pk, planted,
    )  # fmt: skip
    found = "\n".join(problems())
    assert f"group {planted} has an id below 1" in found
    assert "(auth_user_groups)" in found


@pytest.mark.parametrize("planted", [0, -1])
def test_the_api_lists_users_and_judgements_without_a_500(history, planted, staff):
    sql(
        "INSERT INTO auth_user (id, password, is_superuser, username, first_name, last_name, "
        "email, is_staff, is_active, date_joined) VALUES (%s, 'x', %s, 'root', '', '', '', %s, "
        "%s, CURRENT_TIMESTAMP)",
        planted, False, False, True,
    )  # fmt: skip
    sql("UPDATE judgements_judgement SET creator_id = %s", planted)
    token = ApiToken.issue(staff, "ops")[1]
    for path in ("/api/users/", "/api/judgements/"):
        response = Client().get(path, headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 200, (path, response.content)


@pytest.mark.parametrize("planted", [0, -1])
def test_a_superuser_with_an_id_below_1_signs_in_nowhere(history, planted):
    """The attacker's superuser with a known password, and a token of theirs (a token's
    own id is MAGI's, from 1): refused by password, by session and by token."""
    root = User(id=planted, username="root", is_superuser=True, is_staff=True)
    root.set_password("known")
    sql(
        "INSERT INTO auth_user (id, password, is_superuser, username, first_name, last_name, "
        "email, is_staff, is_active, date_joined) VALUES (%s, %s, %s, 'root', '', '', '', %s, "
        "%s, CURRENT_TIMESTAMP)",
        planted, root.password, True, True, True,
    )  # fmt: skip
    browser = Client()
    assert not browser.login(username="root", password="known")
    browser.force_login(User.objects.get(pk=planted))
    assert browser.get("/admin/").status_code == 302  # the session is not theirs: sign in
    key = ApiToken.issue(User.objects.get(pk=planted), "ci")[1]
    response = Client().get("/api/users/", headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 401
