"""MAGI as tools for AI agents, over the Model Context Protocol (the official `mcp` SDK).

Three tools: judge a content with a saved panel (or three agents) and wait for the
verdict; read a judgement; list the panels the caller may use. The same tools serve two
ways, over a `Backend`: inside MAGI at /mcp (agent_tools/in_app.py, the caller's API
token) and as `magi mcp` over stdio for a local client, talking to a running MAGI's HTTP
API (agent_tools/remote.py). No Django here.

Fail-closed: `go` is true only for an approved verdict in force; everything else (a
rejection, a held or unfinished verdict, an error) reads as do not proceed.
"""

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import NotRequired, Protocol

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import TypeAdapter

# typing_extensions: pydantic reads these (the judgement read below, and the SDK for each
# tool's output schema), on 3.11.
from typing_extensions import TypedDict

from judgements.core.json_values import JsonObject

# The longest a tool waits for a verdict; an unfinished judgement comes back with
# `finished: false`, to be read again with `read_judgement`.
WAIT_MAX_SECONDS = 300


class JudgeRequest(TypedDict):
    """What the judge tool sends to be judged, as POST /api/judgements/ takes it."""

    title: str
    content: str
    panel: NotRequired[str | int]
    agents: NotRequired[list[dict[str, str]]]
    hold_contested: NotRequired[bool]


class Backend(Protocol):
    """Judgements and panels answer as the HTTP API's JSON (outcome/answers.py,
    outcome/panel_answers.py), which the tools read below."""

    async def judge(self, case: JudgeRequest, key: str, wait: float) -> JsonObject: ...
    async def read(self, judgement_id: int, wait: float) -> JsonObject: ...
    async def panels(self) -> list[Mapping[str, object]]: ...
    def page_url(self, judgement_id: int) -> str: ...


class RoundRead(TypedDict):
    reason: str


class AgentRead(TypedDict):
    name: str
    final_decision: NotRequired[str | None]
    rounds: NotRequired[list[RoundRead]]


class CertificateRead(TypedDict):
    words: NotRequired[str]


class JudgementRead(TypedDict):
    """What the tools read of a judgement's answer (outcome/answers.py's Judgement); keys
    read with a default may be missing, as from an older MAGI."""

    id: int
    status: NotRequired[str | None]
    panel_status: NotRequired[str | None]
    contested: NotRequired[bool | None]
    contest_reasons: NotRequired[list[str]]
    trust: NotRequired[str | None]
    trust_words: NotRequired[str | None]
    certificate: NotRequired[CertificateRead | None]
    error: NotRequired[str | None]
    agents: NotRequired[list[AgentRead]]


JUDGEMENT = TypeAdapter(JudgementRead)


class AgentVerdict(TypedDict):
    name: str
    final_decision: str | None
    reasons: list[str]


class Verdict(TypedDict):
    """A verdict as the judge and read_judgement tools answer it (and describe it to the
    agent, as their output schema): proceed only when `go` is true."""

    go: bool
    verdict: str | None
    finished: bool
    panel_verdict: str | None
    contested: bool | None
    contest_reasons: list[str]
    trust: str | None
    trust_words: str | None
    certificate: str | None
    held: bool
    error: str | None
    judgement_id: int
    url: str
    agents: list[AgentVerdict]


class Panels(TypedDict):
    """The saved panels the caller may judge with, each as GET /api/panels/ lists it.
    Each is said to be an object and no more: the SDK gives this as the tool's output
    schema, and pydantic cannot build one from the recursive JsonObject."""

    panels: list[Mapping[str, object]]


PANELS = TypeAdapter(Panels)


class ToolRefused(ToolError):
    """What the caller did wrong or may not do, in words the agent can act on (the SDK
    sends a ToolError's message to the model; any other exception only as "Error executing
    tool")."""


def verdict(answer: JsonObject, backend: Backend) -> Verdict:
    """The judgement as a tool answers it: the verdict in force first, go only on approval."""
    judgement = JUDGEMENT.validate_python(answer)
    status = judgement.get("status")
    return {
        "go": status == "approved",
        "verdict": status,
        "finished": status not in ("idle", "judging"),
        "panel_verdict": judgement.get("panel_status"),
        "contested": judgement.get("contested"),
        "contest_reasons": judgement.get("contest_reasons", []),
        # "not_contested" only under the panel's certificate; "unmeasured" otherwise.
        "trust": judgement.get("trust"),
        "trust_words": judgement.get("trust_words"),
        "certificate": (judgement.get("certificate") or {}).get("words"),
        "held": status == "held",
        "error": judgement.get("error"),
        "judgement_id": judgement.get("id"),
        "url": backend.page_url(judgement["id"]),
        "agents": [
            {
                "name": agent["name"],
                "final_decision": agent.get("final_decision"),
                "reasons": [r["reason"] for r in agent.get("rounds", [])],
            }
            for agent in judgement.get("agents", [])
        ],
    }


def idempotency_key(case: JudgeRequest) -> str:
    """The same request from an agent that retries starts one judgement, not two."""
    digest = hashlib.sha256(json.dumps(case, sort_keys=True).encode()).hexdigest()
    return f"magi-mcp-{digest[:48]}"


def build(backend_for: Callable[[], Backend]) -> MCPServer:
    """The MCP server; `backend_for()` gives the Backend of the request being served."""
    server = MCPServer(
        name="magi",
        instructions=(
            "MAGI gates an intended action with a panel of three LLM agents. Call judge "
            "before acting; proceed only when its answer says go: true."
        ),
    )

    @server.tool(
        description=(
            "Judge a content (an intended action, a text to check) with a saved panel "
            "(`panel`: its name or id; see list_panels) or three agents (`agents`: name, "
            "model, criteria each), waiting up to `wait_seconds` for the verdict. Proceed "
            "only if the answer's `go` is true."
        )
    )
    async def judge(
        title: str,
        content: str,
        panel: str | int | None = None,
        agents: list[dict[str, str]] | None = None,
        hold_contested: bool | None = None,
        wait_seconds: float = 120,
    ) -> Verdict:
        case: JudgeRequest = {"title": title, "content": content}
        if panel is not None:
            case["panel"] = panel
        if agents is not None:
            case["agents"] = agents
        if hold_contested is not None:
            case["hold_contested"] = hold_contested
        wait = min(max(wait_seconds, 0), WAIT_MAX_SECONDS)
        backend = backend_for()
        return verdict(await backend.judge(case, idempotency_key(case), wait), backend)

    @server.tool(
        description="Read a judgement by id, waiting up to `wait_seconds` for it to finish."
    )
    async def read_judgement(judgement_id: int, wait_seconds: float = 0) -> Verdict:
        backend = backend_for()
        wait = min(max(wait_seconds, 0), WAIT_MAX_SECONDS)
        return verdict(await backend.read(judgement_id, wait), backend)

    @server.tool(description="The saved panels you may judge with: yours and the examples.")
    async def list_panels() -> Panels:
        return {"panels": await backend_for().panels()}

    return server
