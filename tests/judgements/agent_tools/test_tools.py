"""MAGI's MCP tools driven by the official SDK's own client over real HTTP, against a
running MAGI (daphne, the suite's scripted model server): at /mcp with the caller's API
token, and through `magi mcp` over stdio for a local client."""

import json
import sys
from pathlib import Path

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult, TextContent

from tests.support.live_site import LiveMagi

CREATE_PANEL = """
from django.contrib.auth import get_user_model
from judgements.configuration import saving
owner = get_user_model().objects.get(username={username!r})
names = (("Melchior", "model-a"), ("Balthasar", "model-b"), ("Casper", "model-c"))
agents = [{{"name": name, "model": model, "criteria": name + " approves only safe plans."}}
          for name, model in names]
saving.save_panel(owner=owner, name="travel", agents=agents)
"""


@pytest.fixture(scope="module")
def magi(llm_server, tmp_path_factory):
    site = LiveMagi(tmp_path_factory.mktemp("mcp"), llm_server.base_url, users=2).start()
    site.manage("shell", "-v", "0", "-c", CREATE_PANEL.format(username=site.usernames[0]))
    site.token = site.manage("api_token", site.usernames[0]).strip()
    site.other_token = site.manage("api_token", site.usernames[1]).strip()
    yield site
    site.stop()


@pytest.fixture
def votes(fake_llm):
    for model in ("model-a", "model-b", "model-c"):
        fake_llm.script(model, votes_when={"Lisbon": "AAA", "yacht": "RRR"})
    return fake_llm


def over_http(magi, token: str) -> Client:
    headers = {"Authorization": f"Bearer {token}"}
    transport = streamable_http_client(
        f"{magi.url}/mcp", http_client=create_mcp_http_client(headers=headers)
    )
    return Client(transport)


def text_of(result: CallToolResult) -> str:
    """A tool's answer: MAGI's tools answer with one text item."""
    item = result.content[0]
    assert isinstance(item, TextContent), item
    return item.text


def answer_of(result: CallToolResult) -> dict:
    assert not result.is_error, result.content
    return json.loads(text_of(result))


async def test_an_agent_judges_with_a_saved_panel_and_gets_a_go(magi, votes):
    async with over_http(magi, magi.token) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {"judge", "read_judgement", "list_panels"}
        # Each answer's shape is named in the tool's output schema, `go` first of all.
        verdict = tools["judge"].output_schema
        assert verdict is not None and tools["read_judgement"].output_schema == verdict
        assert "go" in verdict["required"] and verdict["properties"]["go"]["type"] == "boolean"
        listing = tools["list_panels"].output_schema
        assert listing is not None and listing["properties"]["panels"]["type"] == "array"
        panels = answer_of(await client.call_tool("list_panels", {}))["panels"]
        assert "travel" in [panel["name"] for panel in panels]
        judged = answer_of(
            await client.call_tool(
                "judge", {"title": "Trip", "content": "A train to Lisbon.", "panel": "travel"}
            )
        )
    assert judged["go"] is True and judged["verdict"] == "approved"
    # The example panel holds no certificate: the tool says so beside the go.
    assert judged["trust"] == "unmeasured" and judged["certificate"] is None
    assert judged["trust_words"].startswith("Trust not measured for this panel")
    assert judged["url"] == f"{magi.url}/judgements/{judged['judgement_id']}/"
    assert [agent["final_decision"] for agent in judged["agents"]] == ["approve"] * 3
    assert all(len(agent["reasons"]) == 3 for agent in judged["agents"])


async def test_a_rejection_is_no_go_and_reads_back_by_id(magi, votes):
    async with over_http(magi, magi.token) as client:
        judged = answer_of(
            await client.call_tool(
                "judge", {"title": "Boat", "content": "A yacht for the team.", "panel": "travel"}
            )
        )
        again = answer_of(
            await client.call_tool("read_judgement", {"judgement_id": judged["judgement_id"]})
        )
    assert judged["go"] is False and judged["verdict"] == "rejected"
    assert again == judged


async def test_the_tools_keep_the_http_apis_rules(magi, votes):
    async with over_http(magi, magi.other_token) as client:
        # Another user's panel and judgement do not exist for this caller.
        refused = await client.call_tool(
            "judge", {"title": "Trip", "content": "A train to Lisbon.", "panel": "travel"}
        )
        assert refused.is_error and "panel" in text_of(refused)
        unseen = await client.call_tool("read_judgement", {"judgement_id": 1})
        assert unseen.is_error and "No judgement 1." in text_of(unseen)
        blank = await client.call_tool(
            "judge", {"title": "Trip", "content": "  ", "panel": "travel"}
        )
        assert blank.is_error and "content" in text_of(blank)


async def test_a_retried_call_starts_one_judgement(magi, votes):
    case = {"title": "Again", "content": "Again: a train to Lisbon.", "panel": "travel"}
    async with over_http(magi, magi.token) as client:
        first = answer_of(await client.call_tool("judge", case))
        second = answer_of(await client.call_tool("judge", case))
    assert first["judgement_id"] == second["judgement_id"]
    asked = [r for r in votes.requests if "Again: a train" in json.dumps(r.body)]
    assert len(asked) == 9


async def test_without_a_token_the_endpoint_answers_401(magi):
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            f"{magi.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        )
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")


async def test_magi_mcp_over_stdio_talks_to_a_running_magi(magi, votes):
    command = StdioServerParameters(
        command=str(Path(sys.executable).with_name("magi")),
        args=["mcp"],
        env={"MAGI_URL": magi.url, "MAGI_TOKEN": magi.token},
    )
    async with Client(command) as client:
        judged = answer_of(
            await client.call_tool(
                "judge",
                {"title": "Trip", "content": "Stdio: a train to Lisbon.", "panel": "travel"},
            )
        )
    assert judged["go"] is True
    assert judged["url"] == f"{magi.url}/judgements/{judged['judgement_id']}/"
