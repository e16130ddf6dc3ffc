"""`magi verify RECEIPT_FILE`: check a MAGI receipt or evidence pack offline, with the
keys you trust (--keys: a JWK set you hold, or MAGI's published one at
/.well-known/magi-keys.json), the content it is about and a checkpoint a witness kept,
if given. It reads a receipt, an evidence pack, an API answer or `magi gate --json`'s
output alike; it never trusts keys or checkpoints found inside what it checks, and says
what it read. Exit 0: valid; 1: not valid, naming what failed; 2: bad input.
"""

import argparse
import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TextIO

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from magi_client import checkpoints
from magi_client.canonical import stored_content
from magi_client.json_values import JsonValue
from magi_client.packs import GONE_ON, check_pack
from magi_client.receipts import (
    PACK_FORMAT,
    CheckedReceipt,
    NotValid,
    check_receipt,
    trusted_keys,
)

EXIT_VALID = 0
EXIT_NOT_VALID = 1
EXIT_BAD_INPUT = 2


class BadInput(Exception):
    """A file or URL that cannot be read as what it should be; exit 2."""


def answer_in(document: JsonValue) -> dict[str, JsonValue] | None:
    """The API answer in what `magi gate --json` prints, or the API answer itself; None
    for a receipt or a pack."""
    if not isinstance(document, dict):
        return None
    judgement = document.get("judgement")
    if isinstance(judgement, dict) and "receipt" in judgement:
        return judgement
    if "receipt" in document and "signature" not in document and "format" not in document:
        return document
    return None


def receipt_in(document: JsonValue) -> JsonValue:
    """The signed receipt in what `magi gate --json` prints, or an API answer; the
    document itself otherwise (a receipt). BadInput: JSON that is none of these."""
    answer = answer_in(document)
    if answer is not None:
        document = answer["receipt"]
        if document is None:
            raise NotValid("the judgement has no receipt: it has no verdict, or none in the chain")
    elif not isinstance(document, dict) or "receipt" not in document:
        raise BadInput(
            "RECEIPT_FILE: it is JSON, but not a receipt, an evidence pack, an API answer or "
            'magi gate --json\'s output (none holds a "receipt")'
        )
    return document


def story_levels(answer: dict[str, JsonValue]) -> list[dict[str, JsonValue]]:
    """The levels of the answer's escalation story, as it lists them (none: no story)."""
    story = answer.get("escalation")
    levels = story.get("levels") if isinstance(story, dict) else None
    if not isinstance(levels, list):
        return []
    return [level for level in levels if isinstance(level, dict)]


def said_alike(document: JsonValue, receipt: CheckedReceipt) -> None:
    """What an API answer or `magi gate --json` says beside its receipt is what the
    receipt signed: its status (and the gate's verdict) the receipt's verdict in force,
    and the receipt about the judgement the answer is, or about its story's level in
    force; NotValid naming what contradicts it. Each level's own receipt beside it is
    checked for what the answer says of that level."""
    answer = answer_in(document)
    if answer is None:
        return
    signed = receipt.body.get("verdict")
    if answer.get("status") != signed:
        raise NotValid(
            f"the answer's status is {answer.get('status')!r}, its signed receipt's verdict "
            f"{signed!r}: the document contradicts its receipt"
        )
    gate = document.get("verdict") if isinstance(document, dict) else None
    if answer is not document and gate not in (None, "error", signed):
        raise NotValid(
            f"the gate's verdict is {gate!r}, its signed receipt's {signed!r}: the document "
            "contradicts its receipt"
        )
    levels = story_levels(answer)
    subjects = [answer.get("id"), *(level.get("judgement") for level in levels)]
    if receipt.body.get("judgement") not in subjects:
        raise NotValid(
            f"the receipt is judgement {receipt.body.get('judgement')}'s, the answer is "
            f"judgement {answer.get('id')}'s and its story's"
        )
    for level in levels:
        own = level.get("receipt")
        body = own.get("receipt") if isinstance(own, dict) else None
        if not isinstance(body, dict):
            continue
        said = [level.get("judgement"), level.get("panel_status")]
        if said != [body.get("judgement"), body.get("panel_verdict")]:
            raise NotValid(
                f"level {level.get('level')} of the answer says judgement {said[0]} "
                f"{said[1]!r}, its receipt judgement {body.get('judgement')} "
                f"{body.get('panel_verdict')!r}: the document contradicts its receipt"
            )


def read_json(source: str, what: str) -> JsonValue:
    """A JSON document from a file, or from an http(s) URL (the published keys)."""
    try:
        if source.startswith(("http://", "https://")):
            with urllib.request.urlopen(source, timeout=30) as response:
                data = response.read()
        else:
            with open(source, "rb") as handle:
                data = handle.read()
    except (OSError, urllib.error.URLError, ValueError) as exc:
        raise BadInput(f"{what}: cannot read {source}: {exc}") from None
    try:
        parsed: JsonValue = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadInput(f"{what}: {source} is not JSON: {exc}") from None
    return parsed


def read_bytes(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise BadInput(f"{what}: cannot read {path}: {exc}") from None


def content_of(data: bytes) -> bytes:
    """The content file as MAGI stored what it judged (canonical.stored_content): a
    trailing newline or CRLF is not a different content."""
    try:
        return stored_content(data.decode("utf-8")).encode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"--content: not UTF-8 text: {exc}") from None


def kept_checkpoint(source: str, keys: Mapping[str, Ed25519PublicKey]) -> checkpoints.Checkpoint:
    """A checkpoint kept outside MAGI: `magi audit watch`'s state file, or a note."""
    try:
        with open(source, "rb") as handle:
            text = handle.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"--checkpoint: cannot read {source}: {exc}") from None
    if text.lstrip().startswith("{"):
        try:
            text = str(json.loads(text)["checkpoint"])
        except (ValueError, KeyError, TypeError):
            raise BadInput(f"--checkpoint: {source} is JSON without a checkpoint") from None
    try:
        return checkpoints.checked(text, keys)
    except checkpoints.BadCheckpoint as exc:
        raise NotValid(f"the kept checkpoint: {exc}") from None


def against_kept(proven: checkpoints.Checkpoint | None, kept: checkpoints.Checkpoint) -> None:
    """The receipt's or pack's checkpoint is the one kept: same log, size and root."""
    if proven is None:
        raise NotValid(
            "it carries no inclusion proof yet: nothing to check against the kept checkpoint"
        )
    if proven.origin != kept.origin:
        raise NotValid(f"it is of log {proven.origin!r}, the kept checkpoint of {kept.origin!r}")
    if proven.size != kept.size:
        raise NotValid(
            f"it was proven in the log at size {proven.size}, the kept checkpoint is at size "
            f"{kept.size}: fetch it again after `magi audit watch` (or the proof at that size: "
            "GET /api/log/proof/inclusion?leaf_hash=...&tree_size=...)"
        )
    if proven.root != kept.root:
        raise NotValid(
            "its checkpoint and the kept one have the same size and different roots: a fork"
        )


@dataclass(frozen=True)
class Verified:
    """What checked: the receipt, and the verdict in force it shows (a story pack's: its
    level in force's)."""

    receipt: CheckedReceipt
    verdict: object


def check(args: argparse.Namespace, stdout: TextIO) -> Verified:
    """What checked; NotValid or BadInput otherwise."""
    document = read_json(args.receipt, "RECEIPT_FILE")
    trusted = trusted_keys(read_json(args.keys, "--keys"))
    stdout.write(f"keys: {len(trusted.keys)} trusted, from {args.keys} (only those given)\n")
    for refused in trusted.refused:
        stdout.write(f"not trusted: {refused}\n")
    content = None if args.content is None else content_of(read_bytes(args.content, "--content"))
    kept = None if args.checkpoint is None else kept_checkpoint(args.checkpoint, trusted.keys)
    if isinstance(document, dict) and document.get("format") == PACK_FORMAT:
        if "keys" in document:
            stdout.write('the pack\'s own "keys" were not used\n')
        pack = check_pack(document, trusted.keys, content)
        stdout.write(f"entries: {pack.entries}, {pack.proven} proven in the pack's checkpoint\n")
        if pack.levels > 1:
            stdout.write(
                f"story: {pack.levels} levels, each checked; the verdict in force is level "
                f"{pack.levels}'s\n"
            )
        if kept is not None:
            against_kept(pack.checkpoint, kept)
        return Verified(pack.receipt, pack.verdict)
    receipt = check_receipt(receipt_in(document), trusted.keys, content)
    said_alike(document, receipt)
    if kept is not None:
        against_kept(receipt.checkpoint, kept)
    return Verified(receipt, receipt.body.get("verdict"))


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    try:
        checked = check(args, stdout)
    except BadInput as exc:
        stderr.write(f"magi verify: bad input: {exc}\n")
        return EXIT_BAD_INPUT
    except NotValid as exc:
        stderr.write(f"magi verify: NOT VALID: {exc}\n")
        return EXIT_NOT_VALID
    receipt = checked.receipt.body
    proven = checked.receipt.checkpoint
    where = (
        "not yet in a checkpoint"
        if proven is None
        else f"entry {checked.receipt.index} of {proven.origin} at size {proven.size}"
    )
    verdict = checked.verdict
    if verdict == GONE_ON:
        # Only a level that escalated signs this: not decided here, never an approval.
        verdict = (
            f"escalated (its panel: {receipt.get('panel_verdict')}; the story's next level "
            "decides: verify the story's pack)"
        )
    stdout.write(
        f"valid: judgement {receipt.get('judgement')} {verdict}, content sha256 "
        f"{receipt.get('content_sha256')}, {where}\n"
    )
    return EXIT_VALID


def add_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    parser = commands.add_parser(
        "verify",
        help="check a MAGI receipt or evidence pack offline with the published keys",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="exit status: 0 valid, 1 not valid (the reason on standard error), 2 bad input",
    )
    parser.add_argument(
        "receipt",
        metavar="RECEIPT_FILE",
        help="a receipt, an evidence pack, an API answer or magi gate --json's output",
    )
    parser.add_argument(
        "--keys",
        required=True,
        help="the keys to trust: a JWK set file, or its URL (/.well-known/magi-keys.json); "
        "a retired key only when a trusted key signed its retirement",
    )
    parser.add_argument("--content", help="the content judged: checked against the receipt")
    parser.add_argument(
        "--checkpoint",
        help="a checkpoint a witness kept (magi audit watch's --state file, or a checkpoint "
        "file): the receipt must be proven in it",
    )
    parser.set_defaults(run=run)
