"""Users from the command line, for the operator and scripts (docs/team-lead.md).

    manage.py user create USERNAME --email ADDRESS [--staff]
    manage.py user staff USERNAME on|off
    manage.py user list

A user made here has an email address (notifications need one) and no password: a
person is given one with `manage.py changepassword USERNAME`, a bot a token with
`manage.py api_token USERNAME --team TEAM`. Each change is audited with no user as the
author (the operator's command line). Exit 2 for invalid input, naming the field.
"""

import sys
from argparse import ArgumentParser
from typing import NotRequired, TypedDict, Unpack

from django.core.management.base import BaseCommand

from judgements.configuration import people
from judgements.core.errors import InvalidInput
from judgements.management import invalid_input

EXIT_OK, EXIT_INVALID = 0, 2
SWITCH = {"on": True, "off": False}


class UserOptions(TypedDict):
    """What add_arguments parses: the action, and the arguments of the one given."""

    action: str
    username: NotRequired[str]
    email: NotRequired[str]
    staff: NotRequired[bool]
    switch: NotRequired[str]


class Command(BaseCommand):
    help = "Create users with an email address, make them staff or not, list them."

    def add_arguments(self, parser: ArgumentParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        creating = actions.add_parser("create", help="create a user with an email address")
        creating.add_argument("username")
        creating.add_argument("--email", required=True, help="where MAGI tells them what waits")
        creating.add_argument("--staff", action="store_true", help="sees and changes everything")
        staffing = actions.add_parser("staff", help="make a user staff, or not")
        staffing.add_argument("username")
        staffing.add_argument("switch", choices=sorted(SWITCH))
        actions.add_parser("list", help="every user: username, email, staff, teams")

    def handle(self, *args: object, **options: Unpack[UserOptions]) -> None:
        try:
            self.act(options)
        except InvalidInput as exc:
            invalid_input.refuse(self.stderr, exc)
        sys.exit(EXIT_OK)

    def act(self, options: UserOptions) -> None:
        action = options["action"]
        if action == "create":
            user = people.create_user(None, options["username"], options["email"], options["staff"])
            staff = " (staff)" if user.is_staff else ""
            self.stdout.write(
                f"user {user.pk} {user.get_username()!r} <{user.email}>{staff} created"
            )
        elif action == "staff":
            user = people.set_staff(None, options["username"], SWITCH[options["switch"]])
            self.stdout.write(f"user {user.get_username()!r}: staff {options['switch']}")
        else:
            for user in people.listing(None):
                teams = ", ".join(sorted(team.name for team in user.teams.all())) or "-"
                staff = "staff" if user.is_staff else "-"
                self.stdout.write(f"{user.get_username()}\t{user.email or '-'}\t{staff}\t{teams}")
