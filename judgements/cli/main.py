"""The `magi` command installed with MAGI: the client's commands (gate, plan, apply,
export: clients/magi-client, which installs on its own) and `magi mcp`, which serves
MAGI's agent tools and needs the server's packages. No Django here either."""

import sys

from judgements.agent_tools import remote
from magi_client.main import build_parser


def main(argv: list[str] | None = None) -> int:
    parser, commands = build_parser()
    remote.add_parser(commands)
    args = parser.parse_args(argv)
    return int(args.run(args, sys.stdin, sys.stdout, sys.stderr))
