"""`magi gate`: a pipeline's gate. It sends content to a running MAGI for a saved panel
to judge, waits for the verdict, prints one line (or JSON) and exits 0 only for an
approval in force. Fail-closed: a rejection, a held verdict, an error, a timeout, bad
input, an unreachable server and a spent budget each exit with a status of their own,
never 0.

It retries safely: every attempt carries the same Idempotency-Key (by default a hash of
the panel, the title and the content), so a retried request, or the whole job run again,
gets the judgement the first one started instead of paying for a second.
"""

import argparse
import hashlib
import json
import os
import time
from typing import TextIO

from magi_client.canonical import stored_content
from magi_client.http import OverBudget, RequestFailed, RetryLater, Server, Unreachable
from magi_client.json_values import JsonObject
from magi_client.receipts import NotValid, check_receipt, keys_of

EXIT_APPROVED = 0
EXIT_ERROR = 1
EXIT_BAD_INPUT = 2
EXIT_REJECTED = 3
EXIT_HELD = 4
EXIT_UNREACHABLE = 5
EXIT_TIMEOUT = 6
EXIT_OVER_BUDGET = 7
EXIT_OF_STATUS = {"approved": EXIT_APPROVED, "rejected": EXIT_REJECTED, "held": EXIT_HELD}
# Every exit status and its words: the help's epilog is written from it, so a status
# added above without its words fails tests/magi_client/test_gate.py.
EXIT_WORDS = {
    EXIT_APPROVED: "approved",
    EXIT_ERROR: "error",
    EXIT_BAD_INPUT: "bad input",
    EXIT_REJECTED: "rejected",
    EXIT_HELD: "held for a person",
    EXIT_UNREACHABLE: "server unreachable",
    EXIT_TIMEOUT: "no verdict in time",
    EXIT_OVER_BUDGET: "over a spending limit (402)",
}
UNFINISHED = {"idle", "judging"}
# The API's longest ?wait; a longer gate waits in several requests.
API_WAIT_MAX = 300


class GateFailure(Exception):
    """Why the gate cannot give a verdict, with the exit status that says so."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def failure_of(failed: RequestFailed) -> GateFailure:
    """A request's failure as the gate exits with it: the server unreachable, a refusal
    as bad input, anything else (a limit, a server error) as an error."""
    if isinstance(failed, Unreachable):
        return GateFailure(EXIT_UNREACHABLE, str(failed))
    if isinstance(failed, OverBudget):
        return GateFailure(EXIT_OVER_BUDGET, str(failed))
    if isinstance(failed, RetryLater):
        return GateFailure(EXIT_ERROR, str(failed))
    return GateFailure(EXIT_BAD_INPUT, str(failed))


def default_key(panel: str, title: str, content: str) -> str:
    digest = hashlib.sha256(json.dumps([panel, title, content]).encode()).hexdigest()
    return f"magi-gate-{digest[:48]}"


def judge(server: Server, case: JsonObject, key: str, deadline: float) -> JsonObject:
    """Submit the case (retried with the same key) and follow it until it finishes or the
    deadline passes. The judgement as the API answers it."""
    path = None
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise GateFailure(EXIT_TIMEOUT, "no verdict before the time ran out")
        wait = max(0, min(int(left), API_WAIT_MAX))
        try:
            if path is None:
                judgement = server.call(
                    "POST", f"/api/judgements/?wait={wait}", case, {"Idempotency-Key": key}
                )
                path = f"/api/judgements/{judgement['id']}/"
            else:
                judgement = server.call("GET", f"{path}?wait={wait}")
        except RetryLater as later:
            if time.monotonic() + later.after >= deadline:
                raise failure_of(later) from None
            time.sleep(later.after)  # a client backing off, not ordering events
            continue
        except RequestFailed as failed:
            raise failure_of(failed) from None
        if judgement.get("status") not in UNFINISHED:
            return judgement


def story_level(judgement: JsonObject, key: str) -> JsonObject | None:
    """The level of the judgement's escalation story that `key` of the story names
    ("decided_by", "in_force"); None: no story, or it names none."""
    story = judgement.get("escalation")
    if not isinstance(story, dict):
        return None
    wanted = story.get(key)
    levels = story.get("levels")
    if wanted is None or not isinstance(levels, list):
        return None
    found = (lv for lv in levels if isinstance(lv, dict) and lv.get("level") == wanted)
    return next(found, None)


def deciding_level(judgement: JsonObject) -> JsonObject | None:
    """The level of the judgement's escalation story whose verdict is in force (None: no
    story, or no level has decided)."""
    return story_level(judgement, "decided_by")


def receipt_subject(judgement: JsonObject) -> object:
    """The judgement the answer's top-level receipt must be about: in a story, the level
    in force's (the top-level fields are that level's, docs/escalation.md); else its own."""
    in_force = story_level(judgement, "in_force")
    return judgement.get("id") if in_force is None else in_force.get("judgement")


def verdict_line(judgement: JsonObject, panel: str, page: str, refused: str | None = None) -> str:
    """The one line: the gate's verdict first (an approval whose receipt does not check
    is an error, `refused` saying why: the line never says approved for a no-go)."""
    status = "error" if refused is not None else judgement.get("status", "unknown")
    words = [str(status), f"panel={panel}", f"judgement={judgement.get('id')}"]
    # The mark in words ("Contested", "Not contested", "Trust not measured for this
    # panel"): what a person may rely on, never a change of the verdict or the exit status.
    deciding = deciding_level(judgement)
    if deciding is not None:
        # An escalation story (docs/escalation.md): which level's verdict is in force.
        words.append(f"level={deciding['level']}")
        level_panel = deciding.get("panel")
        name = level_panel.get("name") if isinstance(level_panel, dict) else None
        words.append(f"level_panel={name}")
        words.append(f"level_judgement={deciding['judgement']}")
    if judgement.get("trust_words"):
        words.append(str(judgement["trust_words"]))
    if judgement.get("error"):
        words.append(f"error={judgement['error']!r}")
    if refused is not None:
        words.append(f"receipt_refused={refused!r}")
    return "  ".join([*words, page])


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    url = args.url or os.environ.get("MAGI_URL", "")
    token = args.token or os.environ.get("MAGI_TOKEN", "")
    missing = [
        name
        for name, value in (("--url or MAGI_URL", url), ("--token or MAGI_TOKEN", token))
        if not value
    ]
    if missing:
        stderr.write(f"magi gate: bad input: give {' and '.join(missing)}\n")
        return EXIT_BAD_INPUT
    try:
        content = read_content(args.file, stdin)
    except (OSError, UnicodeDecodeError) as exc:
        stderr.write(f"magi gate: bad input: --file: {exc}\n")
        return EXIT_BAD_INPUT
    # A decimal panel is an id, as the API takes it; anything else a name.
    panel: str | int = int(args.panel) if args.panel.isdecimal() else args.panel
    case = {"title": args.title, "content": content, "panel": panel}
    key = args.key or default_key(args.panel, args.title, content)
    server = Server(url, token, timeout=args.timeout + API_WAIT_MAX)
    try:
        judgement = judge(server, case, key, time.monotonic() + args.timeout)
    except GateFailure as failure:
        stderr.write(f"magi gate: {failure}\n")
        return failure.status
    page = f"{url.rstrip('/')}/judgements/{judgement.get('id')}/"
    refused = None
    if args.require_receipt and judgement.get("status") == "approved":
        refused = receipt_refusal(server, args.keys, judgement, content)
    if args.json:
        stdout.write(
            json.dumps(
                {
                    # The gate's verdict: an approval whose receipt does not check is an
                    # error here, as its exit status says.
                    "verdict": "error" if refused is not None else judgement.get("status"),
                    "panel": args.panel,
                    "url": page,
                    "judgement": judgement,
                    # The verdict in force's receipt: in a story, the level in force's.
                    "receipt": judgement.get("receipt"),
                    "level": (deciding_level(judgement) or {}).get("level"),
                    "receipt_refused": refused,
                }
            )
            + "\n"
        )
    else:
        stdout.write(verdict_line(judgement, args.panel, page, refused) + "\n")
    if refused is not None:
        stderr.write(f"magi gate: the approval's receipt does not check: {refused}\n")
        return EXIT_ERROR
    # Fail-closed: only an approval in force is a go; an error or a status this command
    # does not know is not.
    status = judgement.get("status")
    return EXIT_OF_STATUS.get(status, EXIT_ERROR) if isinstance(status, str) else EXIT_ERROR


def receipt_refusal(
    server: Server, keys: str | None, judgement: JsonObject, content: str
) -> str | None:
    """Why the approval's signed receipt does not check (with the keys file given, else
    the server's published keys), or None when it does: --require-receipt."""
    try:
        if keys:
            with open(keys, "rb") as handle:
                jwks = json.loads(handle.read())
        else:
            jwks = server.call("GET", "/.well-known/magi-keys.json")
        # The top-level receipt is the verdict in force's: in a story, the level in force
        # signed it, about its own judgement.
        signed, judgement_id = judgement.get("receipt"), receipt_subject(judgement)
        receipt = check_receipt(signed, keys_of(jwks), content.encode("utf-8")).body
    except (OSError, ValueError, RequestFailed, NotValid) as exc:
        return str(exc) or type(exc).__name__
    if receipt.get("judgement") != judgement_id or receipt.get("verdict") != "approved":
        return "the receipt is not this judgement's approval"
    return None


def read_content(path: str | None, stdin: TextIO) -> str:
    """The content as the server will store it (canonical.stored_content), so what is
    sent, what the idempotency key hashes and what the receipt names are the same."""
    if path in (None, "-"):
        return stored_content(stdin.read())
    with open(path, encoding="utf-8") as handle:
        return stored_content(handle.read())


def add_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    parser = commands.add_parser(
        "gate",
        help="judge content with a saved panel on a running MAGI; exit 0 only if approved",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="exit status: " + ", ".join(f"{code} {words}" for code, words in EXIT_WORDS.items()),
    )
    parser.add_argument("--url", help="MAGI's address (or MAGI_URL), e.g. https://magi.example.com")
    parser.add_argument("--token", help="an API token (or MAGI_TOKEN; prefer the variable)")
    parser.add_argument("--panel", required=True, help="the saved panel to judge with (name or id)")
    parser.add_argument("--title", default="magi gate", help="the judgement's title")
    parser.add_argument("--file", help="read the content from this file (default: standard input)")
    parser.add_argument(
        "--timeout", type=float, default=900, help="seconds to wait for the verdict (default 900)"
    )
    parser.add_argument(
        "--key", help="the Idempotency-Key (default: a hash of panel, title and content)"
    )
    parser.add_argument(
        "--json", action="store_true", help="print the verdict and the judgement as JSON"
    )
    parser.add_argument(
        "--require-receipt",
        action="store_true",
        help="exit 0 only if the approval's signed receipt checks (docs/evidence.md)",
    )
    parser.add_argument(
        "--keys",
        help="with --require-receipt: MAGI's JWK set as a file (default: the server's "
        "/.well-known/magi-keys.json)",
    )
    parser.set_defaults(run=run)
