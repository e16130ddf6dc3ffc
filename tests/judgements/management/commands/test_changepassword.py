"""`manage.py changepassword` (ours over Django's): the new password hash is audited (its
SHA-256), so `manage.py audit verify` finds the change in the log; the same hash written
into the database instead is named (configuration/test_people.py)."""

import getpass
import io

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from tests.support import live_state

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a long and unusual passphrase 7"


def test_a_password_changed_with_the_command_checks_clean(fake_llm, monkeypatch):
    configured = live_state.configured()
    # The terminal's prompt answered (Django's prompt, not ours, reads it).
    monkeypatch.setattr(getpass, "getpass", lambda prompt="": PASSWORD)
    call_command("changepassword", "maker", stdout=io.StringIO())
    assert User.objects.get(pk=configured.maker.pk).check_password(PASSWORD)
    live_state.assert_clean()
