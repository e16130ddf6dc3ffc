"""`magi audit watch URL --state FILE`: a witness of a MAGI's audit log. It keeps the last
checkpoint it checked in FILE, fetches the log's latest, checks its signature with the
keys it trusts and, by the log's consistency proof, that the new tree extends the one it
kept; then keeps the new one. A log whose tree went back (a rollback) or was rewritten
(a fork) exits 1 and keeps the old checkpoint, the evidence. Run it from somewhere the
MAGI's operators cannot write (another machine, a CI job, cron).

Exit 0: consistent (with --once, after one check); 1: a fork, a rollback or a bad
signature; 2: bad input (an unreadable state file, keys or answer; with --once, the server
unreachable). Running on, a witness whose server does not answer says so on standard
error and tries again, waiting 0.5 s, then twice as long each time, up to --interval.
"""

import argparse
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import TextIO

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from magi_client import checkpoints, merkle
from magi_client.json_values import JsonObject, JsonValue
from magi_client.receipts import NotValid, hex_hash, trusted_keys

EXIT_CONSISTENT = 0
EXIT_INCONSISTENT = 1
EXIT_BAD_INPUT = 2


class BadInput(Exception):
    """Something that cannot be read as what it should be; exit 2."""


class Inconsistent(Exception):
    """The log is not what the witness kept: exit 1."""


class Unreachable(BadInput):
    """The server did not answer (refused, timed out, an HTTP error): exit 2 with --once;
    a witness running on tries again, backing off."""


# The first wait after an unanswered request, doubled each time up to --interval.
FIRST_RETRY = 0.5


def get_json(url: str) -> JsonValue:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            data = response.read()
    except (OSError, urllib.error.URLError) as exc:
        raise Unreachable(f"cannot read {url}: {exc}") from None
    try:
        parsed: JsonValue = json.loads(data)
    except ValueError as exc:
        raise BadInput(f"cannot read {url}: {exc}") from None
    return parsed


def read_state(path: Path) -> JsonObject:
    """The witness's state as its file holds it: the keys it trusts and the last checkpoint
    it checked, each checked where it is read (a file anyone may have edited)."""
    if not path.exists():
        return {}
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise BadInput(f"--state: cannot read {path}: {exc}") from None
    if not isinstance(found, dict):
        raise BadInput(f"--state: {path} is not a witness's state")
    return found


def write_state(path: Path, state: JsonObject) -> None:
    """Replaced whole or not at all (written beside, then renamed over)."""
    temporary = path.with_name(path.name + ".new")
    temporary.write_text(json.dumps(state, indent=2) + "\n")
    os.replace(temporary, path)


def keys_for(
    args: argparse.Namespace, state: JsonObject, out: TextIO
) -> dict[str, Ed25519PublicKey]:
    """The keys given; else those kept in the state; else the server's published ones,
    kept from now on (trust on first use, which it says)."""
    if args.keys:
        source = args.keys
        jwks = (
            get_json(source)
            if source.startswith(("http://", "https://"))
            else json.loads(Path(source).read_text())
        )
    elif "keys" in state:
        jwks = state["keys"]
    else:
        jwks = get_json(args.url.rstrip("/") + "/.well-known/magi-keys.json")
        out.write(
            "keys: trusting the keys the server publishes now, on first use; kept in the state\n"
        )
    state["keys"] = jwks
    try:
        return trusted_keys(jwks).keys
    except NotValid as exc:
        raise BadInput(f"keys: {exc}") from None


def check_once(args: argparse.Namespace, out: TextIO) -> None:
    path = Path(args.state)
    state = read_state(path)
    keys = keys_for(args, state, out)
    answer = get_json(args.url.rstrip("/") + "/api/log/checkpoint")
    if not isinstance(answer, dict) or not isinstance(text := answer.get("checkpoint"), str):
        raise BadInput("the server's answer holds no checkpoint")
    try:
        new = checkpoints.checked(text, keys)
    except checkpoints.BadCheckpoint as exc:
        raise Inconsistent(f"the log's checkpoint: {exc}") from None
    kept = state.get("checkpoint")
    if isinstance(kept, str):
        old = checkpoints.checked(kept, keys)
        extends(args.url, old, new)
        out.write(f"consistent: {new.origin} grew from {old.size} to {new.size} entries\n")
    else:
        out.write(f"kept: {new.origin} at {new.size} entries (the first checkpoint seen)\n")
    write_state(path, state | {"checkpoint": new.text})


def extends(url: str, old: checkpoints.Checkpoint, new: checkpoints.Checkpoint) -> None:
    """That `new` extends `old`, by the log's consistency proof."""
    if new.origin != old.origin:
        raise Inconsistent(f"the server now serves log {new.origin!r}, not {old.origin!r}")
    if new.size < old.size:
        raise Inconsistent(f"rollback: the log went back from {old.size} to {new.size} entries")
    proof: list[bytes] = []
    if new.size > old.size:
        query = urllib.parse.urlencode({"first": old.size, "second": new.size})
        answer = get_json(f"{url.rstrip('/')}/api/log/proof/consistency?{query}")
        hashes = answer.get("proof") if isinstance(answer, dict) else None
        if not isinstance(hashes, list):
            raise Inconsistent("the server gives no consistency proof between the two sizes")
        try:
            proof = [hex_hash(item, "a hash of the proof") for item in hashes]
        except NotValid as exc:
            raise Inconsistent(str(exc)) from None
    try:
        merkle.check_consistency(old.size, new.size, old.root, new.root, proof)
    except merkle.ProofFailed as exc:
        raise Inconsistent(f"fork: {exc}") from None


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    wait = FIRST_RETRY
    while True:
        try:
            check_once(args, stdout)
        except Unreachable as exc:
            if args.once:
                stderr.write(f"magi audit watch: bad input: {exc}\n")
                return EXIT_BAD_INPUT
            # A witness outlives a server's restart: it says so, and tries again later.
            wait = min(wait, args.interval)
            stderr.write(f"magi audit watch: unreachable: {exc}; trying again in {wait:g} s\n")
            stderr.flush()
            time.sleep(wait)  # backing off, not ordering events
            wait *= 2
            continue
        except (BadInput, checkpoints.BadCheckpoint, OSError, ValueError) as exc:
            stderr.write(f"magi audit watch: bad input: {exc}\n")
            return EXIT_BAD_INPUT
        except Inconsistent as exc:
            stderr.write(f"magi audit watch: INCONSISTENT: {exc}\n")
            return EXIT_INCONSISTENT
        stdout.flush()
        if args.once:
            return EXIT_CONSISTENT
        wait = FIRST_RETRY
        time.sleep(args.interval)  # a witness polling, not ordering events


def add_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    audit = commands.add_parser("audit", help="watch a MAGI's audit log as a witness")
    actions = audit.add_subparsers(dest="audit_action", required=True)
    parser = actions.add_parser(
        "watch",
        help="keep the log's last checkpoint; exit non-zero on a fork or a rollback",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "url", metavar="URL", help="the MAGI's address, e.g. https://magi.example.com"
    )
    parser.add_argument(
        "--state", required=True, help="the file the witness keeps its checkpoint in"
    )
    parser.add_argument(
        "--keys", help="the keys to trust: a JWK set file or URL (default: kept in the state)"
    )
    parser.add_argument("--once", action="store_true", help="check once and exit")
    parser.add_argument(
        "--interval", type=float, default=60.0, help="seconds between checks (default 60)"
    )
    parser.set_defaults(run=run)
