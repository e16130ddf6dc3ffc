"""admin/people.py and admin/teams.py's UserAdmin: every way the admin changes what lets a
user in (a password, their groups and permissions, a group's own permissions and name, a
group deleted, a user added with a password) writes the audit rows `manage.py audit
verify` compares the users with, so each checks clean; the same changes made behind
MAGI's back are named (configuration/test_people.py)."""

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.urls import reverse

from tests.support import live_state
from tests.support.live_state import assert_clean, changed

pytestmark = pytest.mark.django_db(transaction=True)

NEW_PASSWORD = "a long and unusual passphrase 7"


@pytest.fixture
def configured(fake_llm):
    return live_state.configured()


def user_form(user: User, **changes: object) -> dict[str, object]:
    """The admin's change form of `user` as it shows them, with `changes`."""
    form: dict[str, object] = {
        "username": user.username, "email": user.email, "is_active": "on",
        "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00",
    }  # fmt: skip
    return form | changes


def permission(codename: str) -> int:
    return Permission.objects.get(codename=codename).pk


def test_groups_and_permissions_given_in_the_user_form_check_clean(configured, admin_client):
    group = Group.objects.create(name="operators")
    url = reverse("admin:auth_user_change", args=[configured.maker.pk])
    form = user_form(
        configured.maker, groups=[group.pk], user_permissions=[permission("view_panel")]
    )
    assert admin_client.post(url, form).status_code == 302
    assert list(configured.maker.groups.all()) == [group]
    assert_clean()


def test_a_groups_permissions_name_and_deletion_in_the_admin_check_clean(configured, admin_client):
    """What a group holds its members hold: each change is audited on each member."""
    assert (
        admin_client.post(reverse("admin:auth_group_add"), {"name": "operators"}).status_code == 302
    )
    group = Group.objects.get(name="operators")
    url = reverse("admin:auth_user_change", args=[configured.maker.pk])
    assert admin_client.post(url, user_form(configured.maker, groups=[group.pk])).status_code == 302
    change = reverse("admin:auth_group_change", args=[group.pk])
    form = {"name": "ops", "permissions": [permission("delete_budget")]}
    assert admin_client.post(change, form).status_code == 302
    assert_clean()
    delete = reverse("admin:auth_group_delete", args=[group.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 302
    assert not Group.objects.exists()
    assert_clean()


def test_another_users_password_set_in_the_admin_checks_clean(configured, admin_client):
    url = reverse("admin:auth_user_password_change", args=[configured.maker.pk])
    form = {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"}
    assert admin_client.post(url, form).status_code == 302
    configured.maker.refresh_from_db()
    assert configured.maker.check_password(NEW_PASSWORD)
    assert_clean()


def test_ones_own_password_changed_in_the_admin_checks_clean(configured, admin_client):
    form = {"old_password": "pw", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    assert admin_client.post(reverse("admin:password_change"), form).status_code == 302
    root = User.objects.get(username="root")
    assert root.check_password(NEW_PASSWORD)
    assert_clean()
    # And the same hash set behind MAGI's back to one the attacker knows is named.
    User.objects.filter(pk=root.pk).update(password="md5$salt$known")
    live_state.assert_named(changed("user", root.pk, "User"))


def test_a_user_added_in_the_admin_with_a_password_checks_clean(configured, admin_client):
    form = {"username": "newcomer", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD}
    form |= {"usable_password": "true"}
    assert admin_client.post(reverse("admin:auth_user_add"), form).status_code == 302
    assert User.objects.get(username="newcomer").check_password(NEW_PASSWORD)
    assert_clean()
