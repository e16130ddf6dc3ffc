"""Which provider serves a model: configured lists, discovery from /v1/models (with the
provider up, changed and down) and each provider's concurrency limit."""

import asyncio
import threading

import pytest
from asgiref.sync import sync_to_async

from judgements.llm import providers
from judgements.llm.providers import discovery
from judgements.models import Judgement, Status
from tests.support.llm_server import FakeLLM


def join_refreshes() -> None:
    for thread in threading.enumerate():
        if thread.name.startswith("discover-"):
            thread.join(5)


@pytest.fixture(autouse=True)
def fresh_discovery():
    discovery.forget()
    yield
    join_refreshes()
    discovery.forget()


def provider(base_url: str, **extra) -> dict:
    return {
        "base_url": base_url,
        "api_key": "k",
        "structured_output": "json_schema",
        "models": [],
        "timeout": 5.0,
        "temperature": 0.0,
        "seed": 0,
    } | extra


def test_it_refuses_an_unknown_model(fake_llm):
    with pytest.raises(providers.UnknownModelError, match="unknown model 'gpt-nope'"):
        providers.route_for("gpt-nope")


def test_it_routes_models_to_their_own_provider(fake_llm, settings):
    settings.MAGI_PROVIDERS |= {"vllm": provider("http://gpu:8000/v1", models=["qwen"])}
    route = providers.route_for("qwen")
    assert (route.provider, route.base_url, route.timeout) == ("vllm", "http://gpu:8000/v1", 5.0)
    assert providers.route_for("model-a").provider == "default"
    assert "qwen" in providers.available_models()


def test_a_model_temperature_beats_its_providers(fake_llm, settings):
    settings.MAGI_PROVIDERS["default"]["temperature"] = 0.3
    settings.MAGI_MODEL_TEMPERATURES = {"model-b": 0.9}
    assert providers.route_for("model-a").temperature == 0.3
    assert providers.route_for("model-b").temperature == 0.9


def test_a_discovering_provider_offers_every_model_its_server_lists(fake_llm, settings):
    settings.MAGI_PROVIDERS = {"ollama": provider(fake_llm.base_url, discover=True)}
    fake_llm.script("llama3.2:1b")
    assert providers.available_models()[:4] == ["llama3.2:1b", "model-a", "model-b", "model-c"]
    assert providers.route_for("llama3.2:1b").provider == "ollama"
    assert discovery.problems() == {}


def test_the_list_is_cached_and_refreshed_on_demand(fake_llm, settings):
    settings.MAGI_PROVIDERS = {"ollama": provider(fake_llm.base_url, discover=True)}
    assert "model-a" in providers.available_models()
    fake_llm.script("qwen2.5:7b")  # pulled after the first look
    for _ in range(3):
        assert "qwen2.5:7b" not in providers.available_models()
    assert fake_llm.model_listings == 1
    discovery.refresh_all()
    assert "qwen2.5:7b" in providers.available_models()
    assert fake_llm.model_listings == 2


def test_a_stale_list_is_refreshed_in_the_background(fake_llm, settings):
    settings.MAGI_PROVIDERS = {"ollama": provider(fake_llm.base_url, discover=True)}
    settings.MAGI_DISCOVERY_INTERVAL = 0  # always stale
    providers.available_models()
    fake_llm.script("phi4")
    # Stale: it answers from the cache at once and refreshes behind it.
    assert "phi4" not in providers.available_models()
    join_refreshes()
    assert "phi4" in providers.available_models()


def test_a_provider_that_is_down_is_named_and_asked_once(fake_llm, settings):
    gone = FakeLLM().start()
    gone.stop()  # nothing listens on its port now
    settings.MAGI_PROVIDERS |= {"ollama": provider(gone.base_url, discover=True)}
    assert providers.available_models()[:3] == ["model-a", "model-b", "model-c"]
    problem = discovery.problems()["ollama"]
    assert problem.startswith("connection failed")
    # Cached: the page does not wait on the dead endpoint again within the interval.
    listing = discovery._listings["ollama"]
    providers.available_models()
    assert discovery._listings["ollama"] is listing


def test_a_provider_that_goes_down_keeps_its_last_list(fake_llm, settings):
    settings.MAGI_PROVIDERS = {"ollama": provider(fake_llm.base_url, discover=True)}
    assert "model-a" in providers.available_models()
    settings.MAGI_PROVIDERS["ollama"]["base_url"] = "http://127.0.0.1:9/v1"
    discovery.refresh_all()
    assert "model-a" in providers.available_models()
    assert "ollama" in discovery.problems()


@pytest.mark.django_db(transaction=True)
async def test_a_provider_concurrency_limit_holds_calls_back(
    fake_llm, make_judgement, runner, settings
):
    settings.MAGI_PROVIDERS["default"]["concurrency"] = 1
    judgement = await sync_to_async(make_judgement)()
    fake_llm.gate.close()
    run = asyncio.create_task(runner.run_judgement(judgement.pk))
    allowed: set[tuple[str, int]] = set()
    for _ in range(9):
        # One call at a time reaches the server; let each through once it is there. Counted
        # at the gate: the server's in_flight still counts the last call for a moment after
        # its answer reached the client (its handler thread not yet back from writing it).
        parked = await asyncio.to_thread(fake_llm.gate.wait_parked_other_than, allowed)
        assert fake_llm.gate.parked() == [parked]
        allowed.add(parked)
        fake_llm.gate.allow(*parked)
    assert await run
    assert fake_llm.gate.most_parked == 1
    assert (await Judgement.objects.aget(pk=judgement.pk)).status == Status.APPROVED
