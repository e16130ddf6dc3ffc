"""Django's `changepassword`, unchanged but audited: the user's new password hash is in
the audit row it writes (its SHA-256: configuration/people.py's state), so `manage.py
audit verify` does not name the change as made outside MAGI. It overrides Django's own
command of the same name (this app is listed before django.contrib.auth)."""

import getpass
from typing import TypedDict, Unpack

from django.contrib.auth.management.commands import changepassword
from django.contrib.auth.models import User

from judgements.configuration import people

ACTOR = "manage.py changepassword"


class ChangePasswordOptions(TypedDict):
    """What Django's command parses that this one reads."""

    username: str | None


class Command(changepassword.Command):
    def handle(self, *args: object, **options: Unpack[ChangePasswordOptions]) -> None:
        username = options["username"] or getpass.getuser()
        found = User.objects.filter(username=username).values_list("pk", flat=True)
        # Django's prompts run inside: no transaction is held across them.
        with people.changes_audited(list(found), None, ACTOR):
            super().handle(*args, **options)
