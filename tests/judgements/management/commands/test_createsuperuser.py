"""`manage.py createsuperuser` (ours over Django's): the superuser it makes has the audit
row every user made has, so `manage.py audit verify` finds them in the log; the same user
written into the database instead is named (configuration/test_live_state.py)."""

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from judgements.models import AuditEntry, AuditSubject
from tests.support import live_state

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_superuser_it_makes_is_audited_and_checks_clean(fake_llm, monkeypatch):
    live_state.configured()  # the log has started: a user added since is looked for
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "a long and unusual passphrase 7")
    call_command(
        "createsuperuser", "--noinput", "--username", "breakglass", "--email", "bg@example.com",
        stdout=io.StringIO(),
    )  # fmt: skip
    made = User.objects.get(username="breakglass")
    assert made.is_superuser and made.check_password("a long and unusual passphrase 7")
    row = AuditEntry.objects.get(subject=AuditSubject.USER, target=f"user {made.pk}")
    assert (row.before, row.actor) == (None, "manage.py createsuperuser")
    live_state.assert_clean()
