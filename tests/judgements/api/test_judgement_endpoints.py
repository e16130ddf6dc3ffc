import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from django.core.management import call_command

from judgements.models import ApiToken, Judgement
from tests.support.api_client import TokenClient, serve_one_wake_up
from tests.support.cases import case_for

pytestmark = pytest.mark.django_db(transaction=True)


async def post(api, case, query="") -> tuple[int, dict]:
    response = await api.post(
        f"/api/judgements/{query}", json.dumps(case), content_type="application/json"
    )
    return response.status_code, response.json()


async def test_it_queues_a_judgement_and_wakes_a_worker(fake_llm, api, user):
    status, body = await post(api, case_for())
    assert status == 201
    assert body["status"] == "idle" and body["title"] == "Trip to Japan"
    judgement = await Judgement.objects.aget(pk=body["id"])
    assert judgement.creator_id == user.pk
    assert await serve_one_wake_up()


async def test_it_waits_for_the_decision_when_asked(fake_llm, api):
    fake_llm.script("model-a", votes="RRR")
    fake_llm.script("model-b", votes="RAR")
    worker = asyncio.create_task(serve_one_wake_up())
    status, body = await post(api, case_for(), "?wait=30")
    assert await worker
    assert status == 201
    assert body["status"] == "rejected"
    assert body["error"] is None
    assert [a["final_decision"] for a in body["agents"]] == ["reject", "reject", "approve"]
    assert [a["score"] for a in body["agents"]] == [0.0, 0.4, 1.0]
    assert len(body["agents"][2]["rounds"]) == 3


async def test_it_reports_a_judgement_and_waits_on_it(fake_llm, api):
    _, created = await post(api, case_for())
    fake_llm.hold()
    worker = asyncio.create_task(serve_one_wake_up())
    early = await api.get(f"/api/judgements/{created['id']}/")
    assert early.json()["status"] in {"idle", "judging"}
    waiting = asyncio.create_task(api.get(f"/api/judgements/{created['id']}/?wait=30"))
    fake_llm.release()
    response = await waiting
    assert await worker
    assert response.status_code == 200
    assert response.json()["status"] == "approved"


async def test_it_names_the_invalid_fields(fake_llm, api):
    case = case_for()
    case["agents"][1]["model"] = "gpt-nope"
    case["agents"] = case["agents"][:2]
    status, body = await post(api, case)
    assert status == 400
    assert body["errors"] == {"agents": ["Exactly 3 agents are required, got 2."]}
    status, body = await post(api, case_for(content=""))
    assert status == 400 and list(body["errors"]) == ["content"]
    assert await Judgement.objects.acount() == 0


async def test_it_refuses_a_body_that_is_not_json(fake_llm, api):
    response = await api.post("/api/judgements/", "{nope", content_type="application/json")
    assert response.status_code == 400
    assert "not valid JSON" in response.json()["errors"]["case"][0]


@pytest.mark.parametrize("wait", ["soon", "-1", "301"])
async def test_it_refuses_a_bad_wait(fake_llm, api, wait):
    status, body = await post(api, case_for(), f"?wait={wait}")
    assert status == 400 and "wait" in body["errors"]


async def test_a_query_django_refuses_to_parse_is_a_bad_request(fake_llm, api, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 3
    query = "?" + "&".join(f"x{n}=1" for n in range(4)) + "&wait=0"

    status, body = await post(api, case_for(), query)

    assert status == 400
    assert body["error"].startswith("Bad request: The number of GET/POST parameters exceeded")
    assert await Judgement.objects.acount() == 0


@pytest.mark.parametrize("header", [None, "Bearer wrong", "Basic abc"])
async def test_it_needs_a_valid_token(fake_llm, header):
    client = TokenClient(header)
    response = await client.post(
        "/api/judgements/", json.dumps(case_for()), content_type="application/json"
    )
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert await Judgement.objects.acount() == 0


async def test_another_users_judgement_is_not_found(fake_llm, api, make_judgement, other_user):
    judgement = await sync_to_async(make_judgement)(creator=other_user)
    response = await api.get(f"/api/judgements/{judgement.pk}/")
    assert response.status_code == 404
    listed = (await api.get("/api/judgements/")).json()["judgements"]
    assert judgement.pk not in [j["id"] for j in listed]


async def test_the_token_command_prints_a_working_token(fake_llm, user, capsys):
    await sync_to_async(call_command)("api_token", "ada", "--name", "ci")
    key = capsys.readouterr().out.strip()
    client = TokenClient(f"Bearer {key}")
    assert (await client.get("/api/judgements/")).status_code == 200
    stored = await ApiToken.objects.aget(name="ci")
    assert stored.key_hash != key and key not in stored.prefix + stored.key_hash
