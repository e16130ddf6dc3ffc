"""Teams from the command line, for scripting what the admin does.

    manage.py team create NAME
    manage.py team list
    manage.py team show NAME
    manage.py team add NAME USERNAME [USERNAME ...]
    manage.py team remove NAME USERNAME [USERNAME ...]
    manage.py team assign NAME (--panel ID | --suite ID | --token ID)
    manage.py team reviewers PANEL_ID [--users U1,U2] [--whole-team on|off] [--four-eyes on|off]
    manage.py team slack-test NAME

Membership and reviewer changes are audited (judgements/configuration/teams.py), with no user
as the author: the operator's command line. Exit 2 for invalid input, naming the field;
slack-test exits 1 when Slack refused, saying what failed (docs/slack.md).
"""

import sys
from argparse import ArgumentParser
from typing import Literal, NotRequired, TypedDict, Unpack

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand

from judgements.configuration import assignment, slack_config, team_config, teams
from judgements.core import text
from judgements.core.errors import InvalidInput
from judgements.management import invalid_input
from judgements.models import ApiToken, Panel, Suite, Team

EXIT_OK, EXIT_FAILED, EXIT_INVALID = 0, 1, 2
SWITCH = {"on": True, "off": False}


class TeamOptions(TypedDict):
    """What add_arguments parses: the action, and the arguments of the one given."""

    action: str
    name: NotRequired[str]
    usernames: NotRequired[list[str]]
    # assign: one of --panel, --suite, --token; reviewers: the panel's id.
    panel: NotRequired[int | None]
    suite: NotRequired[int | None]
    token: NotRequired[int | None]
    users: NotRequired[str | None]
    whole_team: NotRequired[str | None]
    four_eyes: NotRequired[str | None]


class Command(BaseCommand):
    help = "Create teams, change their members, and say who reviews a team's panel."

    def add_arguments(self, parser: ArgumentParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        actions.add_parser("create", help="create a team").add_argument("name")
        actions.add_parser("list", help="list the teams and their members")
        actions.add_parser("show", help="a team's members, panels, suites and tokens").add_argument(
            "name"
        )
        for action, what in (("add", "add members"), ("remove", "remove members")):
            changing = actions.add_parser(action, help=what)
            changing.add_argument("name")
            changing.add_argument("usernames", nargs="+")
        assigning = actions.add_parser("assign", help="give a panel, suite or token to a team")
        assigning.add_argument("name")
        which = assigning.add_mutually_exclusive_group(required=True)
        which.add_argument("--panel", type=int)
        which.add_argument("--suite", type=int)
        which.add_argument("--token", type=int)
        reviewing = actions.add_parser("reviewers", help="who reviews a panel's judgements")
        reviewing.add_argument("panel", type=int)
        reviewing.add_argument("--users", help="comma-separated usernames (empty: none)")
        reviewing.add_argument("--whole-team", choices=sorted(SWITCH))
        reviewing.add_argument("--four-eyes", choices=sorted(SWITCH))
        testing = actions.add_parser(
            "slack-test", help="post a test message where the team's held verdicts go in Slack"
        )
        testing.add_argument("name")

    def handle(self, *args: object, **options: Unpack[TeamOptions]) -> None:
        try:
            if options["action"] == "slack-test":
                sys.exit(self.slack_test(team_named(options["name"])))
            self.act(options)
        except InvalidInput as exc:
            invalid_input.refuse(self.stderr, exc)
        sys.exit(EXIT_OK)

    def slack_test(self, team: Team) -> int:
        """Post the test message; each line of what happened, failures on stderr."""
        report = slack_config.send_test(team)
        out = self.stdout if report.ok else self.stderr
        for line in report.lines:
            out.write(line)
        return EXIT_OK if report.ok else EXIT_FAILED

    def act(self, options: TeamOptions) -> None:
        action = options["action"]
        if action == "create":
            name = options["name"].strip()
            if not name:
                raise InvalidInput({"name": ["Must not be empty."]})
            # The one way a team is made (the API's, the admin's, a sign-in's): audited.
            made = team_config.create(None, {"name": name, "members": []})
            self.stdout.write(f"team {made.name!r} created")
        elif action == "list":
            for team in Team.objects.prefetch_related("members"):
                self.stdout.write(f"{team.name}\t{', '.join(teams.member_names(team)) or '-'}")
        elif action == "show":
            self.show(team_named(options["name"]))
        elif action in ("add", "remove"):
            team = team_named(options["name"])
            users = users_named(options["usernames"], "usernames")
            change = teams.add_members if action == "add" else teams.remove_members
            change(team, users, None)
            self.stdout.write(f"{team.name}: {', '.join(teams.member_names(team)) or '-'}")
        elif action == "assign":
            team = team_named(options["name"])
            thing = assigned(options)
            assignment.assign(thing, team, None)
            self.stdout.write(f"{type(thing).__name__.lower()} {thing.pk} now belongs to {team}")
        else:
            self.reviewers(options)

    def show(self, team: Team) -> None:
        self.stdout.write(f"members: {', '.join(teams.member_names(team)) or '-'}")
        # The identity provider's reviewers (docs/sign-in.md): on top of each panel's own.
        if all_of := teams.all_panel_reviewers(team):
            self.stdout.write(f"reviewers of every panel (sign-in groups): {', '.join(all_of)}")
        for panel in team.panels.all():
            named = sorted(panel.reviewers.values_list("username", flat=True))
            who = "the whole team" if panel.team_reviews else ", ".join(named) or "-"
            eyes = ", four eyes" if panel.four_eyes else ""
            self.stdout.write(f"panel {panel.pk} {panel.name!r}: reviewers {who}{eyes}")
        for suite in team.suites.all():
            self.stdout.write(f"suite {suite.pk} {suite.name!r}")
        for token in team.api_tokens.all():
            self.stdout.write(f"token {token.pk} {token.name!r} ({token.prefix}…)")

    def reviewers(self, options: TeamOptions) -> None:
        # The reviewers action's panel is required (an int); assign's may be None.
        panel_id = options["panel"]
        panel = Panel.objects.filter(pk=panel_id).first() if panel_id is not None else None
        if panel is None:
            raise InvalidInput({"panel": [f"No panel {options['panel']}."]})
        users = None
        if options["users"] is not None:
            names = [name.strip() for name in options["users"].split(",") if name.strip()]
            users = users_named(names, "users")
        whole, four = options["whole_team"], options["four_eyes"]
        teams.set_reviewing(
            panel,
            None,
            reviewers=users,
            team_reviews=None if whole is None else SWITCH[whole],
            four_eyes=None if four is None else SWITCH[four],
        )
        self.stdout.write(f"panel {panel.pk}: {teams.reviewers_state(panel)}")


def team_named(name: str) -> Team:
    team = Team.objects.filter(name=name).first()
    if team is None:
        raise InvalidInput({"name": [f"No team is called {text.escaped(name)!r}."]})
    return team


def users_named(names: list[str], field: str) -> list[User]:
    found = {
        user.get_username(): user for user in get_user_model().objects.filter(username__in=names)
    }
    missing = [name for name in names if name not in found]
    if missing:
        listed = ", ".join(repr(text.escaped(name)) for name in missing)
        raise InvalidInput({field: [f"No user is called {listed}."]})
    return [found[name] for name in names]


# What a team can be given, by option.
ASSIGNABLE: tuple[
    tuple[Literal["panel", "suite", "token"], type[Panel | Suite | ApiToken]], ...
] = (
    ("panel", Panel),
    ("suite", Suite),
    ("token", ApiToken),
)


def assigned(options: TeamOptions) -> Panel | Suite | ApiToken:
    for field, model in ASSIGNABLE:
        pk = options[field]
        if pk is not None:
            thing = model.objects.filter(pk=pk).first()
            if thing is None:
                raise InvalidInput({field: [f"No {field} {pk}."]})
            return thing
    raise InvalidInput({"panel": ["Name a panel, a suite or a token."]})  # argparse requires one
