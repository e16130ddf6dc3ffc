"""Create the example panels and suites that ship with MAGI, once: `make run` calls it
after migrating, so a newcomer can judge with one click. Existing examples are left as
they are (edits by staff included); a deleted or renamed one comes back."""

import sys
from typing import TypedDict, Unpack

from django.core.management.base import BaseCommand

from judgements.configuration import saving, suite_config
from judgements.core.errors import InvalidInput
from judgements.panels import saved_panels

EXIT_INVALID = 2


class LoadExamplesOptions(TypedDict):
    """What Django parses for every command that this one reads."""

    verbosity: int


class Command(BaseCommand):
    help = "Create the shipped example panels and suites that do not exist yet."

    def handle(self, *args: object, **options: Unpack[LoadExamplesOptions]) -> None:
        try:
            saving.ensure_examples()
            suite_config.ensure_examples()
        except InvalidInput as exc:
            # Shipped files that do not validate: a packaging mistake, named precisely.
            for field, messages in exc.errors.items():
                self.stderr.write(f"invalid example: {field}: {' '.join(messages)}")
            sys.exit(EXIT_INVALID)
        if options["verbosity"] >= 1:
            names = ", ".join(p.name for p in saved_panels.visible(None).filter(owner=None))
            self.stdout.write(f"Example panels: {names}.")
