"""Import and export evaluation suites as JSONL (one case a line).

    manage.py suite import FILE --name NAME [--description TEXT] [--owner USERNAME]
    manage.py suite export NAME [--owner USERNAME]
    manage.py suite list

Without --owner a suite has no owner, like the suites MAGI ships: every user sees it.
Export writes the JSONL to standard output; importing it again gives the same cases.
Exit 2 for invalid input, naming the field or the line.
"""

import sys
from pathlib import Path
from typing import NotRequired, TypedDict, Unpack

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandParser

from judgements.configuration import suite_config
from judgements.core import text
from judgements.core.errors import InvalidInput
from judgements.evaluations import suites
from judgements.management import invalid_input
from judgements.models import Suite

EXIT_OK, EXIT_INVALID = 0, 2


class SuiteOptions(TypedDict):
    """What add_arguments parses: the action, and the arguments of the one given."""

    action: str
    file: NotRequired[str]
    name: NotRequired[str]
    description: NotRequired[str]
    owner: NotRequired[str | None]


class Command(BaseCommand):
    help = "Import, export or list evaluation suites (JSONL, one case a line)."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        importing = actions.add_parser("import", help="store a JSONL file as a new suite")
        importing.add_argument("file", help="path to the JSONL file")
        importing.add_argument("--name", required=True, help="the new suite's name")
        importing.add_argument("--description", default="", help="what the suite tests")
        importing.add_argument("--owner", help="the owning user's username (default: none)")
        exporting = actions.add_parser("export", help="print a suite as JSONL")
        exporting.add_argument("name", help="the suite's name")
        exporting.add_argument("--owner", help="the owning user's username (default: none)")
        actions.add_parser("list", help="list the suites")

    def handle(self, *args: object, **options: Unpack[SuiteOptions]) -> None:
        try:
            if options["action"] == "import":
                suite = import_file(options)
                count = suite.cases.count()
                self.stderr.write(f"suite {suite.name!r} imported: {count} cases")
            elif options["action"] == "export":
                self.stdout.write(suites.export_jsonl(find_suite(options)), ending="")
            else:
                for suite in Suite.objects.select_related("owner"):
                    owner = suite.owner.get_username() if suite.owner else "-"
                    self.stdout.write(f"{suite.name}\t{owner}\t{suite.cases.count()} cases")
        except InvalidInput as exc:
            invalid_input.refuse(self.stderr, exc)
        sys.exit(EXIT_OK)


def owner_of(username: str | None) -> User | None:
    if username is None:
        return None
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise InvalidInput({"owner": [f"No user is called {text.escaped(username)!r}."]})
    return user


def import_file(options: SuiteOptions) -> Suite:
    owner = owner_of(options["owner"])
    try:
        data = Path(options["file"]).read_bytes()
    except OSError as exc:
        raise InvalidInput({"file": [f"Cannot read {options['file']}: {exc.strerror}."]}) from None
    try:
        upload = suite_config.Upload(options["name"], options["description"], None, data)
        return suite_config.made(None, owner, None, upload)
    except InvalidInput as exc:
        raise InvalidInput(exc.errors) from None


def find_suite(options: SuiteOptions) -> Suite:
    owner = owner_of(options["owner"])
    key = text.comparable_name(options["name"])
    for suite in Suite.objects.filter(owner=owner):
        if text.comparable_name(suite.name) == key:
            return suite
    whose = "without an owner" if owner is None else f"of {owner.get_username()}"
    raise InvalidInput({"name": [f"No suite {whose} is called {text.escaped(options['name'])!r}."]})
