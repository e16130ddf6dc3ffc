"""`magi verify RECEIPT_FILE`: check a MAGI receipt or evidence pack offline, with the
public keys MAGI publishes (/.well-known/magi-keys.json, a JWK set) and, if given, the
content it is about. It reads a receipt, an evidence pack, an API answer or `magi gate
--json`'s output alike. Exit 0: valid; 1: not valid, naming what failed; 2: bad input.
"""

import argparse
import json
import urllib.error
import urllib.request
from typing import Any, TextIO

from magi_client.canonical import stored_content
from magi_client.receipts import PACK_FORMAT, NotValid, check_pack, check_receipt, keys_of

EXIT_VALID = 0
EXIT_NOT_VALID = 1
EXIT_BAD_INPUT = 2


class BadInput(Exception):
    """A file or URL that cannot be read as what it should be; exit 2."""


def receipt_in(document: Any) -> Any:
    """The signed receipt in what `magi gate --json` prints, or an API answer; the
    document itself otherwise (a receipt or a pack)."""
    if isinstance(document, dict):
        if isinstance(document.get("judgement"), dict) and "receipt" in document["judgement"]:
            document = document["judgement"]["receipt"]
        elif "receipt" in document and "signature" not in document and "format" not in document:
            document = document["receipt"]
    if document is None:
        raise NotValid("the judgement has no receipt: it has no verdict, or none in the chain")
    return document


def read_json(source: str, what: str) -> Any:
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
        return json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadInput(f"{what}: {source} is not JSON: {exc}") from None


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


def check(args: argparse.Namespace) -> dict:
    """The checked receipt's body; NotValid or BadInput otherwise."""
    document = read_json(args.receipt, "RECEIPT_FILE")
    keys = keys_of(read_json(args.keys, "--keys"))
    content = None if args.content is None else content_of(read_bytes(args.content, "--content"))
    if isinstance(document, dict) and document.get("format") == PACK_FORMAT:
        return check_pack(document, keys, content)
    return check_receipt(receipt_in(document), keys, content)


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    try:
        receipt = check(args)
    except BadInput as exc:
        stderr.write(f"magi verify: bad input: {exc}\n")
        return EXIT_BAD_INPUT
    except NotValid as exc:
        stderr.write(f"magi verify: NOT VALID: {exc}\n")
        return EXIT_NOT_VALID
    chain = receipt.get("chain") or {}
    stdout.write(
        f"valid: judgement {receipt.get('judgement')} {receipt.get('verdict')}, content sha256 "
        f"{receipt.get('content_sha256')}, chain entry {chain.get('seq')}\n"
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
        help="MAGI's public keys: a JWK set file, or its URL (/.well-known/magi-keys.json)",
    )
    parser.add_argument("--content", help="the content judged: checked against the receipt")
    parser.set_defaults(run=run)
