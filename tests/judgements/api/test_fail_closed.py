"""Fail-closed: no failure becomes an approval, through the API or the command line.
Clients proceed only on "status": "approved" (README, HTTP API)."""

import asyncio
import io
import json

import pytest
from asgiref.sync import sync_to_async
from django.core.management import call_command

from judgements.models import Judgement, Status
from tests.support.api_client import TokenClient, serve_one_wake_up
from tests.support.cases import case_for

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("empty_engine_channel"),
]


# Each failure kind for every attempt of one model in one round: the call fails for good
# while the other two agents approve.
FAILURES = ["500", "malformed", "invalid", "contradiction", "disconnect"]


def fail_model_c(fake_llm, kind: str, round_number: int = 2) -> None:
    fake_llm.script("model-a", votes="AAA")
    fake_llm.script("model-b", votes="AAA")
    fake_llm.script("model-c", votes="AAA", failures={round_number: [kind] * 10})


@pytest.mark.parametrize("kind", FAILURES)
async def test_a_failed_call_is_an_error_through_the_api_never_approved(fake_llm, api, kind):
    fail_model_c(fake_llm, kind)
    worker = asyncio.create_task(serve_one_wake_up())
    response = await api.post(
        "/api/judgements/?wait=30", json.dumps(case_for()), content_type="application/json"
    )
    assert await worker
    body = response.json()
    assert (body["status"], body["panel_status"], body["override"]) == ("error", "error", None)
    assert "Casper" in body["error"]
    read = (await api.get(f"/api/judgements/{body['id']}/")).json()
    assert read["status"] == "error"
    listed = (await api.get("/api/judgements/")).json()["judgements"]
    assert [j["status"] for j in listed] == ["error"]


async def test_no_error_answer_of_the_api_carries_an_approval(fake_llm, api, user):
    answers = [
        await api.post("/api/judgements/", "{nope", content_type="application/json"),
        await TokenClient("Bearer wrong").get("/api/judgements/"),
        await api.get("/api/judgements/999999/"),
        await api.get("/api/nowhere"),
        await api.delete("/api/judgements/"),
    ]
    for response in answers:
        assert response.status_code >= 400
        assert "status" not in response.json()
        assert b"approved" not in response.content


@pytest.mark.parametrize("kind", ["500", "malformed", "contradiction"])
def test_a_failed_call_is_an_error_on_the_command_line(fake_llm, tmp_path, kind):
    fail_model_c(fake_llm, kind, round_number=1)
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case_for()))
    out = io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("judge", str(path), "--json", stdout=out, stderr=io.StringIO())
    result = json.loads(out.getvalue())
    assert exited.value.code == 1
    assert (result["status"], result["panel_status"]) == ("error", "error")
    assert Judgement.objects.get().status == Status.ERROR


async def test_an_error_stays_an_error_after_the_engine_sweeps_again(fake_llm, api, runner):
    fail_model_c(fake_llm, "500")
    worker = asyncio.create_task(serve_one_wake_up())
    body = (
        await api.post(
            "/api/judgements/?wait=30", json.dumps(case_for()), content_type="application/json"
        )
    ).json()
    assert await worker
    # A finished judgement is never claimed again, so nothing can re-judge it to approved.
    assert await runner.run_single_cycle() == []
    assert not await runner.run_judgement(body["id"])
    judgement = await sync_to_async(Judgement.objects.get)(pk=body["id"])
    assert judgement.status == Status.ERROR
