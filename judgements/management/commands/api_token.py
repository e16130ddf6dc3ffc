"""Issue an API token for a user, a team's when --team is given (a bot's, say).

    manage.py api_token USERNAME [--name NAME] [--team TEAM] [--json]

stdout is the key alone, so `TOKEN=$(manage.py api_token bot)` works; stderr says the
token's id (what `manage.py team assign --token` takes), its prefix and whose it is.
With --json, stdout is {"id", "key", "name", "prefix", "team", "user"}. Exit 2 for
invalid input, naming the field.
"""

import json
from argparse import ArgumentParser
from typing import TypedDict, Unpack

from django.core.management.base import BaseCommand

from judgements.configuration import people
from judgements.core.errors import InvalidInput
from judgements.management import invalid_input

EXIT_INVALID = 2


class ApiTokenOptions(TypedDict):
    """What add_arguments parses."""

    username: str
    name: str
    team: str | None
    json: bool


class Command(BaseCommand):
    help = "Issue an API token for a user. The token is shown once; only its hash is kept."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="api", help="what the token is for")
        parser.add_argument("--team", help="the team whose token it is (what it starts is theirs)")
        parser.add_argument("--json", action="store_true", help="print id, key and more as JSON")

    def handle(self, *args: object, **options: Unpack[ApiTokenOptions]) -> None:
        try:
            issued = people.issue_token(None, options["username"], options["name"], options["team"])
        except InvalidInput as exc:
            invalid_input.refuse(self.stderr, exc)
        token = issued.token
        team = f", team {options['team']}" if options["team"] else ""
        self.stderr.write(
            f"token {token.pk} ({token.prefix}…) for {token.user} ({token.name}{team}); "
            "keep it secret:"
        )
        if options["json"]:
            answer = {
                "id": token.pk, "key": issued.key, "name": token.name, "prefix": token.prefix,
                "team": options["team"], "user": token.user.get_username(),
            }  # fmt: skip
            self.stdout.write(json.dumps(answer))
        else:
            self.stdout.write(issued.key)
