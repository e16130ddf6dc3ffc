"""Give a newcomer a login within a minute of the run command."""

import secrets
from typing import TypedDict, Unpack

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from judgements.configuration import people


class EnsureAdminOptions(TypedDict):
    """What add_arguments parses."""

    username: str
    url: str


class Command(BaseCommand):
    help = "Create the first admin account if there is none, and say how to log in."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default="admin")
        parser.add_argument("--url", default="http://127.0.0.1:8000/")

    def handle(self, *args: object, **options: Unpack[EnsureAdminOptions]) -> None:
        users = get_user_model()
        password_file = settings.VAR_DIR / "admin-password.txt"
        username = options["username"]
        if not users.objects.filter(is_superuser=True).exists():
            password = secrets.token_urlsafe(12)
            with transaction.atomic():  # made and audited together, as every user
                made = users.objects.create_superuser(username, password=password)
                people.record_made(made, None, "manage.py ensure_admin")
            password_file.parent.mkdir(parents=True, exist_ok=True)
            password_file.write_text(password + "\n")
            password_file.chmod(0o600)
        if password_file.exists() and users.objects.filter(username=username).exists():
            password = password_file.read_text().strip()
            self.stdout.write(
                f"Log in at {options['url']} as {username!r} with password {password!r} "
                f"(kept in {password_file})."
            )
        else:
            self.stdout.write(
                f"Log in at {options['url']} with your account; "
                "`python manage.py createsuperuser` makes another."
            )
