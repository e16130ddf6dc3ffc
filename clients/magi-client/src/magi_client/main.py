"""The `magi` command: tools that talk to a running MAGI over its HTTP API, installed
on their own (`pip install ./clients/magi-client`) with no Django, database or model
runtime. The server's own `magi` (judgements/cli/main.py) is this one plus `magi mcp`."""

import argparse
import sys
from typing import TypeAlias

from magi_client import config, gate, verify, watch

# The subcommands' parsers, for the server's mcp.
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def build_parser() -> tuple[argparse.ArgumentParser, Commands]:
    parser = argparse.ArgumentParser(prog="magi", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    gate.add_parser(commands)
    config.add_parsers(commands)
    verify.add_parser(commands)
    watch.add_parser(commands)
    return parser, commands


def main(argv: list[str] | None = None) -> int:
    parser, _ = build_parser()
    args = parser.parse_args(argv)
    return int(args.run(args, sys.stdin, sys.stdout, sys.stderr))
