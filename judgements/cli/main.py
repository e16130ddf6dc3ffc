"""The `magi` command installed with MAGI: tools that talk to a running MAGI over its
HTTP API. No Django here: it needs only the server's URL and an API token."""

import argparse
import sys

from judgements.agent_tools import remote
from judgements.cli import gate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="magi", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    gate.add_parser(commands)
    remote.add_parser(commands)
    args = parser.parse_args(argv)
    return args.run(args, sys.stdin, sys.stdout, sys.stderr)
