"""/metrics for operators (judgements/monitoring/): closed unless a token is set, and its
figures are the database's, so every process answers for the whole deployment."""

import urllib.request
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from judgements.engine import lifecycle
from judgements.models import Judgement, LLMAttempt, Status
from tests.support.live_site import LiveMagi

pytestmark = pytest.mark.django_db(transaction=True)
TOKEN = "scrape-me-" + "x" * 20


def scrape(client: Client) -> dict:
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    return samples(response.content.decode())


def samples(text: str) -> dict:
    """(name, sorted labels) -> value, for every sample of the scrape."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_metrics_are_off_until_a_token_is_set(client, settings):
    assert client.get("/metrics").status_code == 404
    settings.MAGI_METRICS_TOKEN = TOKEN
    refused = client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong")
    assert refused.status_code == 401 and refused["WWW-Authenticate"].startswith("Bearer")
    assert client.get("/metrics").status_code == 401


def test_a_scrape_after_a_judgement_counts_it(client, settings, make_judgement, runner):
    settings.MAGI_METRICS_TOKEN = TOKEN
    settings.MAGI_MODEL_PRICES = {"model-a": {"prompt": 1.0, "completion": 2.0, "cached": None}}
    judgement = make_judgement()
    queued = scrape(client)
    assert queued[("magi_queue_depth", ())] == 1
    assert queued[("magi_oldest_queued_seconds", ())] >= 0
    async_to_sync(runner.run_judgement)(judgement.pk)
    figures = scrape(client)
    assert figures[("magi_judgements", (("kind", "person"), ("status", "approved")))] == 1
    assert figures[("magi_judgements", (("kind", "person"), ("status", "idle")))] == 0
    assert figures[("magi_queue_depth", ())] == 0
    assert figures[("magi_time_to_verdict_seconds_count", (("status", "approved"),))] == 1
    assert (
        figures[("magi_time_to_verdict_seconds_bucket", (("le", "+Inf"), ("status", "approved")))]
        == 1
    )
    for model in ("model-a", "model-b", "model-c"):
        labels = (("model", model), ("outcome", "ok"), ("provider", "default"))
        assert figures[("magi_llm_calls_total", labels)] == 3
        assert figures[("magi_llm_retries_total", (("model", model), ("provider", "default")))] == 0
        duration = (("model", model), ("provider", "default"))
        assert figures[("magi_llm_call_duration_seconds_count", duration)] == 3
    stored = LLMAttempt.objects.filter(model="model-a")
    prompt = sum(a.prompt_tokens or 0 for a in stored)
    completion = sum(a.completion_tokens or 0 for a in stored)
    tokens = (("kind", "prompt"), ("model", "model-a"), ("provider", "default"))
    assert figures[("magi_llm_tokens_total", tokens)] == prompt > 0
    cost = figures[("magi_llm_cost_usd_total", (("model", "model-a"), ("provider", "default")))]
    assert cost == pytest.approx((prompt * 1.0 + completion * 2.0) / 1e6)
    assert (
        "magi_llm_cost_usd_total",
        (("model", "model-b"), ("provider", "default")),
    ) not in figures
    assert figures[("magi_lease_takeovers_total", ())] == 0
    assert figures[("magi_webhook_deliveries", (("status", "pending"),))] == 0


def test_a_judgement_claimed_from_an_expired_lease_counts_as_a_takeover(
    client, settings, make_judgement
):
    settings.MAGI_METRICS_TOKEN = TOKEN
    judgement = make_judgement()
    lifecycle.claim("first", Judgement.objects.filter(pk=judgement.pk), 1)
    Judgement.objects.filter(pk=judgement.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert lifecycle.claim("second", Judgement.objects.filter(pk=judgement.pk), 1)
    assert Judgement.objects.get(pk=judgement.pk).status == Status.JUDGING
    assert scrape(client)[("magi_lease_takeovers_total", ())] == 1


@pytest.fixture(scope="module")
def live(llm_server, tmp_path_factory):
    site = LiveMagi(
        tmp_path_factory.mktemp("metrics"), llm_server.base_url, users=1, MAGI_METRICS_TOKEN=TOKEN
    ).start()
    site.token = site.manage("api_token", site.usernames[0]).strip()
    yield site
    site.stop()


def test_prometheus_scrapes_a_running_magi_over_http(live, fake_llm):
    import json

    from tests.support.cases import case_for

    submit = urllib.request.Request(
        f"{live.url}/api/judgements/?wait=60",
        data=json.dumps(case_for()).encode(),
        headers={"Authorization": f"Bearer {live.token}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(submit, timeout=90) as answer:
        assert json.load(answer)["status"] == "approved"
    scrape_request = urllib.request.Request(
        f"{live.url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    with urllib.request.urlopen(scrape_request, timeout=30) as answer:
        figures = samples(answer.read().decode())
    assert figures[("magi_judgements", (("kind", "person"), ("status", "approved")))] == 1
    calls = (("model", "model-a"), ("outcome", "ok"), ("provider", "default"))
    assert figures[("magi_llm_calls_total", calls)] == 3


def test_the_dashboard_asks_only_for_metrics_magi_serves(client, settings, make_judgement):
    import json
    import re

    from magi_site.environment import BASE_DIR

    settings.MAGI_METRICS_TOKEN = TOKEN
    make_judgement()
    text = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").content.decode()
    served = {family.name for family in text_string_to_metric_families(text)}
    dashboard = json.loads((BASE_DIR / "docs" / "grafana-dashboard.json").read_text())
    asked = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"(magi_\w+?)(?:_total|_bucket|_count|_sum)?\b", target["expr"])
    }
    assert asked and asked <= served
