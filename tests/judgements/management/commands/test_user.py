"""`manage.py user`: users with an email address for scripts, made staff or not, listed;
audited as the operator's; exit 2 naming the field for bad input."""

import hashlib

import pytest
from django.contrib.auth import get_user_model

from judgements.configuration import teams
from judgements.models import AuditEntry, AuditSubject, Team
from tests.support.commands import run_command

pytestmark = pytest.mark.django_db


def test_it_creates_a_user_with_an_email_and_no_password():
    code, out, _ = run_command("user", "create", "ana", "--email", "ana@example.com")
    user = get_user_model().objects.get(username="ana")
    assert (code, out.strip()) == (0, f"user {user.pk} 'ana' <ana@example.com> created")
    assert user.email == "ana@example.com" and not user.is_staff
    assert not user.has_usable_password()
    entry = AuditEntry.objects.get(subject=AuditSubject.USER)
    assert (entry.by, entry.before) == (None, None)
    assert entry.after == {
        "username": "ana",
        "email": "ana@example.com",
        "is_staff": False,
        "is_superuser": False,
        "is_active": True,
        "sign_ins": [],
        # Its password hash (an unusable one) by its SHA-256, never the hash itself.
        "password_sha256": hashlib.sha256(user.password.encode()).hexdigest(),
        "groups": [],
        "permissions": [],
    }


def test_it_makes_a_user_staff_and_lists_everyone():
    run_command("user", "create", "ana", "--email", "ana@example.com")
    run_command("user", "create", "bot", "--email", "bot@example.com", "--staff")
    assert run_command("user", "staff", "bot", "off")[0] == 0
    assert not get_user_model().objects.get(username="bot").is_staff
    assert run_command("user", "staff", "ana", "on")[0] == 0
    teams.set_members(
        Team.objects.create(name="Payments"), [get_user_model().objects.get(username="bot")], None
    )
    code, out, _ = run_command("user", "list")
    assert (code, out) == (0, "ana\tana@example.com\tstaff\t-\nbot\tbot@example.com\t-\tPayments\n")


def test_it_names_the_field_of_bad_input():
    run_command("user", "create", "ana", "--email", "ana@example.com")
    code, _, err = run_command("user", "create", "ana", "--email", "other@example.com")
    assert (code, err) == (
        2,
        "invalid input: username: A user with that username already exists.\n",
    )
    code, _, err = run_command("user", "create", "bob", "--email", "not an address")
    assert (code, err) == (2, "invalid input: email: Enter a valid email address.\n")
    code, _, err = run_command("user", "create", "b o b", "--email", "bob@example.com")
    assert code == 2 and err.startswith("invalid input: username: Enter a valid username.")
    code, _, err = run_command("user", "staff", "nobody", "on")
    assert (code, err) == (2, "invalid input: username: No user called 'nobody'.\n")
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["ana"]
