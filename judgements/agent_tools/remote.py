"""`magi mcp`: the same tools over stdio, for a local MCP client (an IDE, a desktop
agent), acting on a running MAGI through its HTTP API with the caller's token. No
Django: the tools' backend is the API, so its rules (validation, permissions, limits,
idempotency) are the server's own."""

import argparse
import asyncio
import os
from collections.abc import Mapping
from typing import TextIO

from judgements.agent_tools.tools import PANELS, JudgeRequest, ToolRefused, build
from magi_client.http import RequestFailed, Server
from magi_client.json_values import JsonObject

# A tool waits at most this long on top of the verdict it waits for.
HTTP_TIMEOUT_SECONDS = 60


class RemoteBackend:
    def __init__(self, url: str, token: str) -> None:
        self.url = url.rstrip("/")
        self.server = Server(self.url, token, timeout=HTTP_TIMEOUT_SECONDS)

    async def call(
        self,
        method: str,
        path: str,
        body: Mapping[str, object] | None = None,
        headers: dict[str, str] | None = None,
        wait: float = 0,
    ) -> JsonObject:
        self.server.timeout = HTTP_TIMEOUT_SECONDS + wait
        try:
            return await asyncio.to_thread(self.server.call, method, path, body, headers)
        except RequestFailed as failure:
            raise ToolRefused(str(failure)) from None

    async def judge(self, case: JudgeRequest, key: str, wait: float) -> JsonObject:
        return await self.call(
            "POST", f"/api/judgements/?wait={wait:g}", case, {"Idempotency-Key": key}, wait
        )

    async def read(self, judgement_id: int, wait: float) -> JsonObject:
        return await self.call("GET", f"/api/judgements/{judgement_id}/?wait={wait:g}", wait=wait)

    async def panels(self) -> list[Mapping[str, object]]:
        # GET /api/panels/ answers as the list_panels tool does: {"panels": [panel, ...]}.
        return PANELS.validate_python(await self.call("GET", "/api/panels/"))["panels"]

    def page_url(self, judgement_id: int) -> str:
        return f"{self.url}/judgements/{judgement_id}/"


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    url = args.url or os.environ.get("MAGI_URL", "")
    token = args.token or os.environ.get("MAGI_TOKEN", "")
    if not url or not token:
        stderr.write("magi mcp: bad input: give --url (or MAGI_URL) and MAGI_TOKEN\n")
        return 2
    backend = RemoteBackend(url, token)
    build(lambda: backend).run("stdio")
    return 0


def add_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    parser = commands.add_parser(
        "mcp",
        help="serve MAGI's tools to a local MCP client over stdio",
        description=__doc__,
    )
    parser.add_argument("--url", help="MAGI's address (or MAGI_URL)")
    parser.add_argument("--token", help="an API token (or MAGI_TOKEN; prefer the variable)")
    parser.set_defaults(run=run)
