"""configuration/people.py: a user's audited state holds what lets them in beside their
flags: the SHA-256 of their password hash, their groups and the permissions they and their
groups hold. Someone who can write the database (not the signing key) and sets a password
hash to one of a password they know, or grants a group or a permission, then signs in:
`manage.py audit verify` names the user. The legitimate ways of changing these (the admin,
the commands, a sign-in's rehash) are tested where they live: admin/test_people.py,
management/commands/test_changepassword.py, identity/test_passwords.py."""

import hashlib

import pytest
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import Group, Permission
from django.test import Client

from judgements.configuration import people, teams
from judgements.models import AuditSubject
from tests.support import live_state
from tests.support.audit_history import placed
from tests.support.live_state import changed, sql, verified

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def configured(fake_llm):
    return live_state.configured()


def assert_user_named(pk: int) -> None:
    live_state.assert_named(changed("user", pk, "User"))


def test_the_state_holds_the_password_hash_by_its_sha256_never_the_hash(configured):
    state = people.state(configured.maker)
    assert configured.maker.password not in state.values()
    digest = hashlib.sha256(configured.maker.password.encode()).hexdigest()
    assert state["password_sha256"] == digest


def test_a_password_hash_set_to_one_the_attacker_knows_is_named(configured):
    sql(
        "UPDATE auth_user SET password = %s WHERE id = %s",
        make_password("known"),
        configured.maker.pk,
    )
    assert Client().login(username="maker", password="known")
    assert_user_named(configured.maker.pk)


def test_a_group_given_behind_magis_back_is_named(configured):
    group = Group.objects.create(name="operators")
    sql(
        "INSERT INTO auth_user_groups (user_id, group_id) VALUES (%s, %s)",
        configured.maker.pk,
        group.pk,
    )
    assert_user_named(configured.maker.pk)


def test_a_permission_granted_behind_magis_back_is_named(configured):
    configured.maker.user_permissions.add(Permission.objects.get(codename="change_panel"))
    assert_user_named(configured.maker.pk)


def test_a_permission_given_to_a_users_group_behind_magis_back_is_named(configured):
    """The group's member holds what it holds: the member is named."""
    group = Group.objects.create(name="operators")
    with people.changes_audited([configured.maker.pk], configured.staff):
        configured.maker.groups.add(group)
    live_state.assert_clean()
    group.permissions.add(Permission.objects.get(codename="delete_budget"))
    assert_user_named(configured.maker.pk)


def test_a_user_audited_before_the_password_was_is_compared_on_the_rest(configured):
    """A user's last row from before issue 55 carries no `password_sha256`, groups or
    permissions: only the fields it carries are compared until their next audited change,
    so an older database is not reported tampered."""
    state = people.state(configured.maker)
    old = {
        name: value
        for name, value in state.items()
        if name not in ("password_sha256", "groups", "permissions")
    }
    teams.record(AuditSubject.USER, f"user {configured.maker.pk}", None, state, old)
    sql("UPDATE auth_user SET password = %s WHERE id = %s", make_password("x"), configured.maker.pk)
    placed()
    assert verified() == (0, "")
