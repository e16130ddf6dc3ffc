"""`magi plan`, `magi apply` and `magi export`: a configuration directory
(directory.py, docs/config-as-code.md) against a running MAGI, as Terraform does it.

plan   prints what apply would change: each object created, changed (field by field, and
       the certificates a change voids) or deleted (with --prune); exit 0 when nothing
       would change, 10 when something would.
apply  makes the server match the directory in one transaction: everything or, when the
       server refuses any part, nothing. Deletes only with --prune.
export writes what the token may see as a directory (a team's, or everything for staff).

Both plan and apply check every file first and exit 2 naming file, line and field before
anything reaches the server; a refusal by the server (a user that does not exist, a model
the deployment does not run) exits 2 the same way, and the server is left as it was.
"""

import argparse
import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TextIO

from magi_client import batch_bodies, directory, server_state, writing
from magi_client import plan as plan_module
from magi_client.http import Refused, RequestFailed, Server, Unreachable, whole
from magi_client.json_values import JsonObject

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_BAD_INPUT = 2
EXIT_UNREACHABLE = 5
EXIT_CHANGES = 10
HTTP_TIMEOUT_SECONDS = 300
# A batch request's bytes besides its operations ({"operations": [], "parts": []}, with
# room to spare), and each part's key in the last request's list.
BATCH_ENVELOPE_BYTES = 256
PART_KEY_BYTES = 64
OPERATION_FIELD = re.compile(r"operations\[(\d+)\]\.?(.*)")
SIGNS = {"create": "+", "change": "~", "delete": "-"}


class Failure(Exception):
    def __init__(self, status: int, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.status = status
        self.lines = lines


def server_of(args: argparse.Namespace) -> Server:
    url = args.url or os.environ.get("MAGI_URL", "")
    token = args.token or os.environ.get("MAGI_TOKEN", "")
    missing = [
        name
        for name, value in (("--url or MAGI_URL", url), ("--token or MAGI_TOKEN", token))
        if not value
    ]
    if missing:
        raise Failure(EXIT_BAD_INPUT, [f"bad input: give {' and '.join(missing)}"])
    return Server(url, token, timeout=HTTP_TIMEOUT_SECONDS)


def call(
    server: Server, method: str, path: str, body: Mapping[str, object] | None = None
) -> JsonObject:
    try:
        return server.call(method, path, body)
    except Unreachable as away:
        raise Failure(EXIT_UNREACHABLE, [str(away)]) from None
    except Refused as refused:
        raise Failure(EXIT_BAD_INPUT, [str(refused)]) from None
    except RequestFailed as failed:
        raise Failure(EXIT_ERROR, [str(failed)]) from None


def read_server(server: Server) -> server_state.ServerState:
    try:
        return server_state.read(server)
    except Unreachable as away:
        raise Failure(EXIT_UNREACHABLE, [str(away)]) from None
    except Refused as refused:
        # A refused token (401) or a right it lacks: bad input, as the docs' table says.
        raise Failure(EXIT_BAD_INPUT, [f"cannot read the configuration: {refused}"]) from None
    except RequestFailed as failed:
        raise Failure(EXIT_ERROR, [f"cannot read the configuration: {failed}"]) from None


def run_batch(
    server: Server, plan: plan_module.Plan, read: directory.Directory, dry_run: bool
) -> None:
    """The plan's operations in one transaction (dry run: checked, then rolled back); a
    refusal told against the file, line and field it came from. A batch larger than one
    request body goes as parts sent ahead, then the batch naming them: still one
    transaction on the server, all or nothing."""
    operations = plan.batch()
    if not operations:
        return
    path = "/api/batch/?dry_run=true" if dry_run else "/api/batch/"
    try:
        *ahead, last = requests_of(server, operations, read)
        parts = [
            server.call("POST", "/api/batch/parts/", {"operations": part})["part"] for part in ahead
        ]
        server.call("POST", path, {"operations": last} | ({"parts": parts} if parts else {}))
    except Unreachable as away:
        raise Failure(EXIT_UNREACHABLE, [str(away)]) from None
    except Refused as refused:
        raise Failure(refusal_status(refused), refusal_lines(refused, operations, read)) from None
    except RequestFailed as failed:
        raise Failure(EXIT_ERROR, [str(failed)]) from None


def requests_of(
    server: Server, operations: list[plan_module.Operation], read: directory.Directory
) -> list[list[batch_bodies.SentOperation]]:
    """The operations as sent, in requests each within the server's limits (GET
    /api/batch/): one request when they fit, or when the server does not say; else parts
    packed as full as they go, and the batch itself holding the last operation and the
    parts' keys. An operation too large for any request is named, with its file, before
    anything is sent."""
    sent = [operation.as_json() for operation in operations]
    try:
        limits = server.call("GET", "/api/batch/")
    except Refused:  # a server from before parts: one request, as it always was
        return [sent]
    max_bytes, max_count = whole(limits, "max_body_bytes"), whole(limits, "max_operations")
    room = max_bytes - BATCH_ENVELOPE_BYTES
    sizes = [len(json.dumps(operation)) + len(", ") for operation in sent]
    if sum(sizes) <= room and len(sent) <= max_count:
        return [sent]
    for operation, size in zip(operations, sizes, strict=True):
        if size > room:
            message = (
                f"Too large for one request to the server: {size:,} bytes as sent, over its "
                f"limit of {max_bytes:,} (MAGI_MAX_BODY_BYTES); nothing was sent."
            )
            raise Failure(EXIT_BAD_INPUT, [str(read.problem(operation.address, message))])
    parts: list[list[batch_bodies.SentOperation]] = [[]]
    used = 0
    for one, size in zip(sent[:-1], sizes[:-1], strict=True):
        if parts[-1] and (used + size > room or len(parts[-1]) >= max_count):
            parts.append([])
            used = 0
        parts[-1].append(one)
        used += size
    if sizes[-1] + PART_KEY_BYTES * len(parts) > room:
        why = f"{len(parts)} parts are too many for one batch of {max_bytes:,} bytes"
        raise Failure(EXIT_BAD_INPUT, [f"bad input: {why}: raise MAGI_MAX_BODY_BYTES."])
    return [*parts, sent[-1:]]


def refusal_status(refused: Refused) -> int:
    # 412: someone changed an object between the read and the write; nothing changed,
    # and running again plans against what is there now.
    return EXIT_ERROR if refused.status == 412 else EXIT_BAD_INPUT


def refusal_lines(
    refused: Refused, operations: list[plan_module.Operation], read: directory.Directory
) -> list[str]:
    lines = []
    for key, messages in refused.errors.items():
        found = OPERATION_FIELD.match(key)
        if found is None or int(found.group(1)) >= len(operations):
            lines.append(f"{key}: {' '.join(messages)}")
            continue
        operation = operations[int(found.group(1))]
        api_field = found.group(2).removeprefix("body").lstrip(".")
        where = operation.field_address(api_field)
        lines.append(str(read.problem(where, " ".join(messages))))
    if not lines:
        # A refusal of one operation as a whole (403, 404, 409, 412): told against the
        # object it was about.
        index = refused.answer.get("operation")
        message = refused.answer.get("error") or str(refused)
        if isinstance(index, int) and 0 <= index < len(operations) and operations[index].address:
            lines.append(
                str(read.problem(operations[index].address, f"{message} ({refused.status})"))
            )
        else:
            lines.append(str(refused))
    return lines


def read_directory(path: str) -> directory.Directory:
    try:
        return directory.read(Path(path))
    except directory.BadDirectory as bad:
        raise Failure(EXIT_BAD_INPUT, [str(problem) for problem in bad.problems]) from None


def value_words(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def plan_lines(plan: plan_module.PlanJson) -> list[str]:
    """The plan as a person reads it in a pull request."""
    lines: list[str] = []
    for change in plan["changes"]:
        lines.append(f"{SIGNS[change['action']]} {change['action']} {change['what']}")
        for difference in change.get("fields", []):
            before, after = value_words(difference["before"]), value_words(difference["after"])
            lines.append(f"    {difference['field']}: {before} -> {after}")
        lines += [f"    voids {certificate}" for certificate in change.get("voids", [])]
    lines += [
        f"  {what}: not in the directory, left alone (--prune deletes it)"
        for what in plan.get("left_alone", [])
    ]
    count = {action: 0 for action in SIGNS}
    for change in plan["changes"]:
        count[change["action"]] += 1
    if not plan["changes"]:
        lines.append("No changes: the server matches the directory.")
    else:
        lines.append(
            f"Plan: {count['create']} to create, {count['change']} to change, "
            f"{count['delete']} to delete."
        )
    return lines


def run_plan(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    return guarded("plan", stdout, stderr, lambda: plan_or_apply(args, stdout, apply=False))


def run_apply(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    return guarded("apply", stdout, stderr, lambda: plan_or_apply(args, stdout, apply=True))


def run_export(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    return guarded("export", stdout, stderr, lambda: export(args, stdout))


def guarded(name: str, stdout: TextIO, stderr: TextIO, work: Callable[[], int]) -> int:
    try:
        return int(work())
    except Failure as failure:
        for line in failure.lines:
            stderr.write(f"magi {name}: {line}\n")
        return failure.status


def plan_or_apply(args: argparse.Namespace, stdout: TextIO, *, apply: bool) -> int:
    read = read_directory(args.directory)
    server = server_of(args)
    plan = plan_module.make(read.state, read_server(server), args.prune)
    run_batch(server, plan, read, dry_run=not apply)
    if args.json:
        stdout.write(json.dumps(plan.as_json(), ensure_ascii=False) + "\n")
    else:
        for line in plan_lines(plan.as_json()):
            stdout.write(line + "\n")
        if apply and plan.changes:
            stdout.write("Applied.\n")
    if apply or not plan.changes:
        return EXIT_OK
    return EXIT_CHANGES


def export(args: argparse.Namespace, stdout: TextIO) -> int:
    state = server_state.as_directory(read_server(server_of(args)))
    refused = writing.unwritable(state)
    if refused:
        raise Failure(EXIT_BAD_INPUT, [f"bad input: {why}" for why in refused])
    for path in writing.write(Path(args.directory), state):
        stdout.write(f"{path}\n")
    return EXIT_OK


def connection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help="MAGI's address (or MAGI_URL)")
    parser.add_argument("--token", help="an API token (or MAGI_TOKEN; prefer the variable)")


def add_parsers(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    for name, run, summary in (
        ("plan", run_plan, "print what `magi apply DIR` would change; exit 10 if anything"),
        ("apply", run_apply, "make the server match DIR, all of it or nothing"),
    ):
        parser = commands.add_parser(
            name,
            help=summary,
            description=__doc__,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            epilog=(
                "exit status: 0 nothing to change (plan) or applied (apply), 1 error, "
                "2 a bad file or a refusal (file, line and field named), 5 server "
                "unreachable, 10 changes to make (plan)"
            ),
        )
        parser.add_argument("directory", help="the configuration directory")
        connection_options(parser)
        parser.add_argument(
            "--prune", action="store_true", help="delete what the directory no longer holds"
        )
        parser.add_argument("--json", action="store_true", help="print the plan as JSON")
        parser.set_defaults(run=run)
    parser = commands.add_parser(
        "export",
        help="write what the token may see as a configuration directory",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "directory", help="where to write (its panels/, suites/ and teams/ are replaced)"
    )
    connection_options(parser)
    parser.set_defaults(run=run_export)
