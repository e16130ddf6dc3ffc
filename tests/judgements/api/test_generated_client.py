"""A client generated from the live /api/schema.json by openapi-python-client (a third
party's generator, as an integrator would run it) submits a case to a running MAGI,
waits for it and reads the verdict, over real HTTP."""

import importlib
import subprocess
import sys

import pytest

from tests.support.cases import case_for
from tests.support.live_site import MODELS, LiveMagi
from tests.support.llm_server import FakeLLM


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    llm = FakeLLM().start()
    llm.script(MODELS[0], votes="AAA")
    llm.script(MODELS[1], votes="RRR")
    llm.script(MODELS[2], votes="RRR")
    site = LiveMagi(tmp_path_factory.mktemp("client"), llm.base_url, users=1).start()
    site.token = site.manage("api_token", site.usernames[0]).strip()
    yield site
    site.stop()
    llm.stop()


@pytest.fixture(scope="module")
def generated_magi(live, tmp_path_factory):
    """The generated package, imported from where the generator wrote it."""
    where = tmp_path_factory.mktemp("generated")
    generated = subprocess.run(
        [
            sys.executable, "-m", "openapi_python_client", "generate",
            "--url", f"{live.url}/api/schema.json",
            "--meta", "none",
            "--output-path", str(where / "generated_magi"),
        ],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert (where / "generated_magi" / "client.py").exists(), generated.stdout + generated.stderr
    sys.path.insert(0, str(where))
    try:
        yield importlib.import_module("generated_magi")
    finally:
        sys.path.remove(str(where))
        for name in [
            m for m in sys.modules if m == "generated_magi" or m.startswith("generated_magi.")
        ]:
            del sys.modules[name]


def test_a_generated_client_submits_waits_and_reads_the_verdict(live, generated_magi):
    submit = importlib.import_module("generated_magi.api.judgements.submit_judgement")
    read = importlib.import_module("generated_magi.api.judgements.read_judgement")
    models = importlib.import_module("generated_magi.models")
    client = generated_magi.AuthenticatedClient(base_url=live.url, token=live.token, timeout=90)

    # One agent approves, two reject: the weighted vote rejects.
    case = case_for(MODELS[:3], title="Deploy 42")
    sent = submit.sync_detailed(client=client, body=case, idempotency_key="deploy-42")
    assert sent.status_code == 201
    assert isinstance(sent.parsed, models.Judgement)
    assert sent.headers["Location"] == f"/api/judgements/{sent.parsed.id}/"

    verdict = read.sync(client=client, judgement_id=sent.parsed.id, wait=60)
    assert isinstance(verdict, models.Judgement)
    assert verdict.status == models.Status.REJECTED
    assert [agent.final_decision for agent in verdict.agents] == [
        models.Decision.APPROVE,
        models.Decision.REJECT,
        models.Decision.REJECT,
    ]
    # The same key and body: the judgement it started, nothing new.
    again = submit.sync_detailed(client=client, body=case, idempotency_key="deploy-42")
    assert (again.status_code, again.parsed.id) == (201, sent.parsed.id)
    assert again.headers["Idempotency-Replayed"] == "true"


def test_a_generated_client_reads_a_refusal_as_the_documented_error(live, generated_magi):
    submit = importlib.import_module("generated_magi.api.judgements.submit_judgement")
    models = importlib.import_module("generated_magi.models")
    client = generated_magi.AuthenticatedClient(base_url=live.url, token=live.token, timeout=90)
    case = case_for(MODELS[:3])
    case["agents"][2]["name"] = case["agents"][0]["name"].upper()

    refused = submit.sync_detailed(client=client, body=case)
    assert refused.status_code == 422
    assert isinstance(refused.parsed, models.Invalid)
    assert list(refused.parsed.errors.additional_properties) == ["agents[2].name"]
