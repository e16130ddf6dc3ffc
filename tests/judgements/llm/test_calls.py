import os
import subprocess
import sys

import pytest
from asgiref.sync import sync_to_async

from judgements.core.prompts import AgentBrief, build_messages
from judgements.llm import calls, providers
from judgements.models import AttemptOutcome, Judgement, LLMAttempt, Status
from tests.support.services import REPO

MESSAGES = build_messages(AgentBrief("Melchior", "Be strict."), "Buy a boat.", 1, [])


async def call(model: str) -> tuple[calls.VerdictResult, list[calls.AttemptRecord]]:
    attempts: list[calls.AttemptRecord] = []

    async def record(entry):
        attempts.append(entry)

    result = await calls.request_verdict(
        calls.Clients(), providers.route_for(model), MESSAGES, record
    )
    return result, [*attempts, result.attempt]


async def failing_call(model: str) -> tuple[calls.LLMCallError, list[calls.AttemptRecord]]:
    attempts: list[calls.AttemptRecord] = []

    async def record(entry):
        attempts.append(entry)

    with pytest.raises(calls.LLMCallError) as caught:
        await calls.request_verdict(calls.Clients(), providers.route_for(model), MESSAGES, record)
    return caught.value, attempts


async def test_it_gets_a_verdict_over_real_http(fake_llm):
    fake_llm.script("model-a", votes="RAA", reason="no budget given")
    result, attempts = await call("model-a")
    assert result.verdict.decision == "reject"
    assert result.verdict.reason == "no budget given"
    assert result.prompt_tokens == 100 and result.completion_tokens == 20
    assert len(attempts) == 1 and attempts[0].ok
    sent = fake_llm.requests_for("model-a")[0].body
    assert sent["messages"] == MESSAGES
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["strict"] is True


async def test_it_sends_the_schema_inside_json_object_for_llama_cpp(fake_llm, settings):
    settings.MAGI_PROVIDERS["default"]["structured_output"] = "json_object"
    await call("model-a")
    sent = fake_llm.requests_for("model-a")[0].body
    assert sent["response_format"]["type"] == "json_object"
    approve, reject = sent["response_format"]["schema"]["anyOf"]
    # As a grammar, the schema allows only answers whose decision follows criterion_met.
    assert approve["properties"]["criterion_met"] == {"const": True}
    assert approve["properties"]["decision"] == {"const": "approve"}
    assert reject["properties"]["criterion_met"] == {"const": False}
    assert reject["properties"]["decision"] == {"const": "reject"}
    assert approve["properties"]["reason"]["maxLength"] == 200
    assert list(approve["properties"]) == ["reason", "criterion_met", "decision", "missing"]
    # An approve finds nothing missing; a reject names at most three short items.
    assert approve["properties"]["missing"] == {"type": "array", "maxItems": 0}
    assert reject["properties"]["missing"] == {
        "type": "array",
        "items": {"type": "string", "maxLength": 60},
        "maxItems": 3,
    }


async def test_it_asks_for_json_in_the_prompt_only_when_the_server_takes_neither(
    fake_llm, settings
):
    settings.MAGI_PROVIDERS["default"]["structured_output"] = "prompt"
    result, _ = await call("model-a")
    assert "response_format" not in fake_llm.requests_for("model-a")[0].body
    assert result.verdict.decision == "approve"


@pytest.mark.parametrize(
    "failure",
    ["500", "503", "429", "malformed", "invalid", "empty", "length", "disconnect", "contradiction"],
)
async def test_it_retries_then_succeeds(fake_llm, failure):
    fake_llm.script("model-a", failures={1: [failure, failure]})
    result, attempts = await call("model-a")
    assert result.verdict.decision == "approve"
    assert [a.ok for a in attempts] == [False, False, True]
    assert all(a.error for a in attempts[:2])
    assert len(fake_llm.requests_for("model-a")) == 3


async def test_it_gives_up_after_three_retries_with_the_cause(fake_llm):
    fake_llm.script("model-a", failures={1: ["500"] * 10})
    error, attempts = await failing_call("model-a")
    assert error.attempts == 4
    assert "HTTP 500" in error.cause and "scripted failure 500" in error.cause
    assert len(attempts) == 4
    assert len(fake_llm.requests_for("model-a")) == 4


async def test_it_names_invalid_output_as_the_cause(fake_llm):
    fake_llm.script("model-a", failures={1: ["invalid"] * 4})
    error, _ = await failing_call("model-a")
    assert "invalid structured output" in error.cause
    assert "decision" in error.cause


async def test_it_names_a_self_contradicting_answer_as_the_cause(fake_llm):
    fake_llm.script("model-a", votes="AAA", failures={1: ["contradiction"] * 4})
    error, attempts = await failing_call("model-a")
    assert error.attempts == 4
    assert error.cause.startswith(
        "contradictory answer (the answer contradicts itself: criterion_met is false but "
        "decision is approve)"
    )
    assert all(a.error.startswith("contradictory answer") for a in attempts)


@pytest.mark.django_db(transaction=True)
async def test_a_judgement_whose_agent_keeps_contradicting_itself_ends_in_error(
    fake_llm, make_judgement, runner
):
    fake_llm.script("model-b", votes="RRR", failures={1: ["contradiction"] * 10})
    judgement = await sync_to_async(make_judgement)()
    assert await runner.run_judgement(judgement.pk)
    judged = await Judgement.objects.aget(pk=judgement.pk)
    assert judged.status == Status.ERROR
    assert judged.error_message == (
        "Agent 'Balthasar' failed in round 1: contradictory answer (the answer contradicts "
        "itself: criterion_met is true but decision is reject): "
        '\'{"reason": "model-b says reject in round 1", "criterion_met": true, '
        '"decision": "reject"}\' (after 4 attempts)'
    )
    failed = LLMAttempt.objects.filter(agent__judgement=judged, agent__name="Balthasar")
    assert [a.outcome async for a in failed] == [AttemptOutcome.FAILED] * 4


@pytest.mark.parametrize(
    ("temperature", "seed"), [(0.0, 0), (0.7, 1234)], ids=["defaults", "configured"]
)
async def test_it_sends_temperature_and_seed(fake_llm, settings, temperature, seed):
    settings.MAGI_PROVIDERS["default"] |= {"temperature": temperature, "seed": seed}
    await call("model-a")
    sent = fake_llm.requests_for("model-a")[0].body
    assert (sent["temperature"], sent["seed"]) == (temperature, seed)
    assert isinstance(sent["temperature"], float) and isinstance(sent["seed"], int)


async def test_it_sends_no_seed_to_a_provider_that_takes_none(fake_llm, settings):
    settings.MAGI_PROVIDERS["default"] |= {"temperature": 0.2, "seed": None}
    await call("model-a")
    sent = fake_llm.requests_for("model-a")[0].body
    assert sent["temperature"] == 0.2
    assert "seed" not in sent


@pytest.mark.parametrize("status", ["400", "401", "403", "404"])
async def test_it_does_not_retry_client_errors(fake_llm, status):
    fake_llm.script("model-a", failures={1: [status]})
    error, attempts = await failing_call("model-a")
    assert error.attempts == 1
    assert f"HTTP {status}" in error.cause
    assert len(fake_llm.requests_for("model-a")) == 1
    assert len(attempts) == 1 and not attempts[0].ok


async def test_it_times_out_and_says_so(fake_llm, settings):
    settings.MAGI_PROVIDERS["default"]["timeout"] = 0.2
    settings.MAGI_LLM_MAX_ATTEMPTS = 2
    fake_llm.gate.close()  # the model never answers
    error, attempts = await failing_call("model-a")
    assert error.cause == "timed out after 0.2 s"
    assert len(attempts) == 2


async def test_it_reports_a_server_that_is_not_there(fake_llm, settings):
    settings.MAGI_PROVIDERS["default"]["base_url"] = "http://127.0.0.1:9/v1"
    settings.MAGI_LLM_MAX_ATTEMPTS = 2
    error, _ = await failing_call("model-a")
    assert error.cause.startswith("connection failed")


async def test_the_attempt_after_an_invalid_answer_samples_again_with_its_own_seed(fake_llm):
    fake_llm.script("model-a", failures={1: ["contradiction", "500"]})
    result, attempts = await call("model-a")
    sent = [r.body for r in fake_llm.requests_for("model-a")]
    assert [(b["temperature"], b["seed"]) for b in sent] == [(0.0, 0), (0.7, 1), (0.0, 0)]
    # The audit keeps each body exactly as sent.
    assert [a.request["temperature"] for a in attempts] == [0.0, 0.7, 0.0]
    assert result.verdict.decision == "approve"


def test_starting_magi_does_not_import_the_sdk_until_a_call_is_made():
    """Every process that starts Django (a web worker, each manage.py command) loads the
    URLs and this module; the SDK's second of imports is paid only by one that calls."""
    code = (
        "import sys, django; django.setup()\n"
        "import magi_site.urls, judgements.llm.calls\n"
        "print('openai' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO, env=env | {"DJANGO_SETTINGS_MODULE": "magi_site.settings"},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
