from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from judgements.models import ApiToken


class Command(BaseCommand):
    help = "Issue an API token for a user. The token is shown once; only its hash is kept."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="api", help="what the token is for")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"no user called {options['username']!r}")
        token, key = ApiToken.issue(user, options["name"])
        self.stderr.write(f"token {token.prefix}… for {user} ({token.name}); keep it secret:")
        self.stdout.write(key)
