"""Certify the escalation chain a saved panel starts (docs/escalation.md).

    manage.py certify_cascade PANEL [--target 0.9] [--delta 0.1] [--json]

PANEL is a saved panel's name or id (the command line acts as the operator) that
escalates to another. Every panel of its chain must have finished evaluation runs of its
current agents on a shared labelled suite (start them with `manage.py evaluate`). It
prints the certificate's sentence and its report: per level the cases it was handed,
the share it kept, the accuracy of what it kept with its interval, its tokens and
seconds, and what it passed on; the cascade; what is left for people; and the strongest
level alone, beside it.

Exit 0 once the certificate is stored (certified or not: for weak models "not
certified" is the answer); 2 for invalid input, naming the field.
"""

import json
import sys

from django.core.management.base import BaseCommand, CommandParser

from judgements.core.errors import InvalidInput
from judgements.evaluations import cascade, certify
from judgements.management import invalid_input
from judgements.outcome import answers
from judgements.panels import saved_panels

EXIT_STORED = 0


class Command(BaseCommand):
    help = "Certify the escalation chain a saved panel starts, from its levels' runs."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("panel", help="a saved panel's name or id")
        parser.add_argument("--target", default=str(certify.DEFAULT_TARGET))
        parser.add_argument("--delta", default=str(certify.DEFAULT_DELTA))
        parser.add_argument("--json", action="store_true", help="print the certificate as JSON")

    def handle(self, *args: str, **options: object) -> None:
        try:
            panel = saved_panels.resolve(str(options["panel"]), None)
            bounds = {}
            for name in ("target", "delta"):
                try:
                    bounds[name] = float(str(options[name]))
                except ValueError:
                    raise InvalidInput({f"--{name}": ["Must be a number."]}) from None
            found = cascade.certify_cascade(panel, target=bounds["target"], delta=bounds["delta"])
        except InvalidInput as exc:
            invalid_input.refuse(self.stderr, exc)
        if options["json"]:
            made = answers.Certificate.from_record(found).model_dump(mode="json")
            self.stdout.write(json.dumps(made, indent=2, ensure_ascii=False))
        else:
            self.stdout.write("\n".join(cascade.report_lines(found)))
        sys.exit(EXIT_STORED)
