"""The audit log from the operator's command line (docs/evidence.md).

manage.py audit verify [--all] [--keys FILE|URL] [--checkpoint FILE]
                                 check the whole log against itself, its checkpoints, the
                                 keys given (else this server's own, which it says), a
                                 checkpoint kept elsewhere (else the newest in
                                 MAGI_AUDIT_CHECKPOINT_DIR), and the rows it describes;
                                 exit 0 clean, 1 naming the first problem (--all: every
                                 one), 2 bad input
manage.py audit keys             print the public keys as a JWK set
manage.py audit new-key          print a new signing key for MAGI_AUDIT_SIGNING_KEY
manage.py audit place            place every queued entry now, under a signed checkpoint
                                 (before a deployment changes its signing key)
manage.py audit rotate-key       place what is queued, then a new key in var/, the old one
                                 kept for checking
manage.py audit retire-key -- X  print the line that keeps retired key X (its public
                                 half) for checking, signed with the current key, for
                                 MAGI_AUDIT_RETIRED_KEYS (the `--`: a key in base64url may
                                 begin with `-`, which would read as an option)
"""

import json
import sys
import urllib.error
import urllib.request
from argparse import ArgumentParser
from typing import NotRequired, TypedDict, Unpack

from django.core.management.base import BaseCommand

from judgements.audit import keys, verification
from judgements.configuration import live_state
from judgements.models import ChainEntry
from judgements.outcome.checkpoints import latest_kept, sequence_and_publish
from magi_client.receipts import NotValid, unb64url

EXIT_CLEAN = 0
EXIT_TAMPERED = 1
EXIT_INVALID = 2


class BadInput(Exception):
    """A --keys or --checkpoint that cannot be read; exit 2."""


def read_source(source: str, what: str) -> bytes:
    try:
        if source.startswith(("http://", "https://")):
            with urllib.request.urlopen(source, timeout=30) as response:
                return bytes(response.read())
        with open(source, "rb") as handle:
            return handle.read()
    except (OSError, urllib.error.URLError, ValueError) as exc:
        raise BadInput(f"{what}: cannot read {source}: {exc}") from None


def kept_checkpoint(source: str) -> str:
    """A checkpoint's note from a file: the note itself (the append-only directory's), or
    `magi audit watch`'s state file (JSON with "checkpoint")."""
    text = read_source(source, "--checkpoint").decode("utf-8", "replace")
    if text.lstrip().startswith("{"):
        try:
            found = json.loads(text).get("checkpoint")
        except (ValueError, AttributeError):
            found = None
        if not isinstance(found, str):
            raise BadInput(f'--checkpoint: {source} is JSON without a "checkpoint" note')
        return found
    return text


class AuditOptions(TypedDict):
    """What add_arguments parses: the action, and the arguments of the one given."""

    action: str
    all: NotRequired[bool]
    keys: NotRequired[str | None]
    checkpoint: NotRequired[str | None]
    public: NotRequired[str]


class Command(BaseCommand):
    help = "Check the audit log (verify), or show and manage its signing keys."

    def add_arguments(self, parser: ArgumentParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        checking = actions.add_parser("verify", help="check the whole log")
        checking.add_argument("--all", action="store_true", help="list every problem found")
        checking.add_argument(
            "--keys", help="trust only these keys: a JWK set file or URL (default: this server's)"
        )
        checking.add_argument(
            "--checkpoint",
            help="a checkpoint kept outside the database (a witness's state file, a file of "
            "the append-only directory): the log must extend it (default: the newest in "
            "MAGI_AUDIT_CHECKPOINT_DIR, if set)",
        )
        actions.add_parser("keys", help="print the public keys as a JWK set")
        actions.add_parser("new-key", help="print a new signing key (a deployment's)")
        actions.add_parser("place", help="place every queued entry now, under a checkpoint")
        actions.add_parser("rotate-key", help="rotate the key kept in var/")
        retiring = actions.add_parser("retire-key", help="sign a retired key's retirement")
        retiring.add_argument(
            "public",
            help="the retired key's public half, base64url; after `--` if it begins with `-`",
        )

    def handle(self, *args: object, **options: Unpack[AuditOptions]) -> None:
        try:
            if options["action"] == "verify":
                sys.exit(self.verify(options["keys"], options["checkpoint"], every=options["all"]))
            if options["action"] == "keys":
                self.stdout.write(json.dumps(keys.jwks(), indent=2))
            elif options["action"] == "new-key":
                self.stdout.write(keys.new_seed())
            elif options["action"] == "retire-key":
                self.stdout.write(self.retire(options["public"]))
            elif options["action"] == "place":
                self.stdout.write(self.place())
            else:
                keys.rotatable()
                self.stdout.write(self.place())
                if self.waiting():
                    raise keys.KeyRefused(
                        "log entries are still queued: stop MAGI's workers and web, then "
                        "rotate (an entry tagged with the old key is not placed after)"
                    )
                old, new = keys.rotate()
                self.stdout.write(f"signing with {new}; {old} kept for checking")
        except (keys.KeyRefused, BadInput) as exc:
            self.stderr.write(f"invalid input: {exc}")
            sys.exit(EXIT_INVALID)

    def waiting(self) -> int:
        return ChainEntry.objects.waiting().count()

    def place(self) -> str:
        """Every queued entry placed under the current key, tagged with it
        (docs/evidence.md, rotation); what it did, in words."""
        placed = sequence_and_publish("manage.py audit")
        waiting = self.waiting()
        still = (
            f"; {waiting} still queued (a worker holds the sequencer's lease, or is writing)"
            if waiting
            else ""
        )
        return f"placed {placed} queued entries{still}"

    def retire(self, public: str) -> str:
        try:
            if len(unb64url(public)) != 32:
                raise NotValid("not 32 bytes")
        except NotValid as exc:
            raise keys.KeyRefused(f"{public!r} is not an Ed25519 public key: {exc}") from None
        return keys.retirement(public)

    def trust(self, source: str | None) -> verification.Trust:
        if source is None:
            return verification.trust_beside_the_data()
        try:
            document = json.loads(read_source(source, "--keys"))
            return verification.trust_given(document, f"the keys given ({source})")
        except (ValueError, NotValid) as exc:
            raise BadInput(f"--keys: {source} is not a JWK set: {exc}") from None

    def verify(self, keys: str | None, checkpoint: str | None, *, every: bool) -> int:
        """--keys, --checkpoint; `every` (--all): every problem listed, not the first."""
        trust = self.trust(keys)
        if checkpoint is None:
            # What the server kept where the database's writer cannot rewrite it.
            latest = latest_kept()
            checkpoint = None if latest is None else str(latest)
            if checkpoint is not None:
                self.stdout.write(
                    f"kept checkpoint: {checkpoint} (the newest in MAGI_AUDIT_CHECKPOINT_DIR; "
                    "--checkpoint FILE checks against another)"
                )
        kept = None if checkpoint is None else kept_checkpoint(checkpoint)
        report = verification.verify(trust, kept, [live_state.differences])
        self.stdout.write(f"keys: {report.keys}")
        for refused in report.refused_keys:
            self.stdout.write(f"not trusted: {refused}")
        unchecked = live_state.not_checked()
        if unchecked:
            self.stdout.write(
                f"not checked: {', '.join(unchecked)} added outside MAGI (the log started "
                "before its genesis named their last row, so they cannot be told from older ones)"
            )
        if report.clean:
            queued = f", {report.queued} queued for the next checkpoint" if report.queued else ""
            against = "" if kept is None else "; it extends the kept checkpoint"
            self.stdout.write(
                f"clean: {report.entries} entries checked{queued}{against}; the log starts "
                f"after judgement {report.judgements_before}"
            )
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
