"""`manage.py ensure_admin`: the first admin is made once, with a password kept in var/,
and audited as every user made, so `manage.py audit verify` checks clean after it."""

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from tests.support import live_state

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_admin_it_makes_is_audited_and_checks_clean(fake_llm, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    live_state.configured()  # the log has started: a user added since is looked for
    out = io.StringIO()
    call_command("ensure_admin", stdout=out)
    password = (tmp_path / "admin-password.txt").read_text().strip()
    assert User.objects.get(username="admin").check_password(password)
    assert repr(password) in out.getvalue()
    call_command("ensure_admin", stdout=io.StringIO())  # a second run makes none
    assert User.objects.filter(is_superuser=True).count() == 1
    live_state.assert_clean()
