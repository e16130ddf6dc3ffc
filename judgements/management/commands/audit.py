"""The audit chain from the operator's command line (docs/evidence.md).

manage.py audit verify [--all]   walk the chain against itself, its signatures and the
                                 rows it describes; exit 0 clean, 1 naming the first
                                 entry that differs (--all: every problem)
manage.py audit keys             print the public keys as a JWK set
manage.py audit new-key          print a new signing key for MAGI_AUDIT_SIGNING_KEY
manage.py audit rotate-key       a new key in var/, the old one kept for checking
"""

import json
import sys
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand

from judgements.audit import keys, verification

EXIT_CLEAN = 0
EXIT_TAMPERED = 1
EXIT_INVALID = 2


class Command(BaseCommand):
    help = "Check the audit chain (verify), or show and manage its signing keys."

    def add_arguments(self, parser: ArgumentParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        checking = actions.add_parser("verify", help="check the whole chain")
        checking.add_argument("--all", action="store_true", help="list every problem found")
        actions.add_parser("keys", help="print the public keys as a JWK set")
        actions.add_parser("new-key", help="print a new signing key (a deployment's)")
        actions.add_parser("rotate-key", help="rotate the key kept in var/")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["action"] == "verify":
                sys.exit(self.verify(options["all"]))
            if options["action"] == "keys":
                self.stdout.write(json.dumps(keys.jwks(), indent=2))
            elif options["action"] == "new-key":
                self.stdout.write(keys.new_seed())
            else:
                old, new = keys.rotate()
                self.stdout.write(f"signing with {new}; {old} kept for checking")
        except keys.KeyRefused as exc:
            self.stderr.write(f"invalid input: {exc}")
            sys.exit(EXIT_INVALID)

    def verify(self, every: bool) -> int:
        report = verification.verify()
        start = f"the chain starts after judgement {report.judgements_before}"
        if report.clean:
            self.stdout.write(f"clean: {report.entries} entries checked; {start}")
            return EXIT_CLEAN
        shown = report.problems if every else report.problems[:1]
        for problem in shown:
            self.stderr.write(f"TAMPERED: {problem}")
        more = len(report.problems) - len(shown)
        tail = f" ({more} more: --all lists them)" if more else ""
        self.stderr.write(
            f"{report.entries} entries checked, {len(report.problems)} problems{tail}"
        )
        return EXIT_TAMPERED
