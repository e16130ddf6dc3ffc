"""A third-party contract test: schemathesis reads the live /api/schema.json and fuzzes
every operation of a running MAGI (daphne, over real HTTP), checking each answer
against the document: no server error, status codes, content types, headers and bodies
as documented, bodies the schema allows accepted and bodies it refuses refused.

The contract: 400 means the request breaks the schema. A schema-valid body that a rule
JSON Schema cannot express refuses (two agents whose names read the same, an unknown
panel, an id that does not exist) answers 404, 409 or 422, never 400 and never 5xx.
"""

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.support.cases import case_for
from tests.support.live_site import MODELS, LiveMagi
from tests.support.llm_server import FakeLLM
from tests.support.services import REPO

CASE = case_for(MODELS[:3])

# A schema-valid request may be refused only for what the schema cannot say: a rule
# (422), a name or id that does not exist (404), a state that forbids it (409), an
# If-Match that is not the object's ETag (412). Never 400, never 5xx. The caller is
# staff, so the review and configuration operations answer for real.
ACCEPTED = ["2xx", "404", "409", "412", "422"]
# A request that breaks the schema: 400 for its body or a parameter; a path that does
# not match (404), a method (405), a body too large (413) or of another type (415) as
# HTTP says.
REFUSED = ["400", "401", "404", "405", "406", "413", "415"]
CHECKS = [
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "positive_data_acceptance",
    "negative_data_rejection",
    "unsupported_method",
    "allow_header_conformance",
]
CONFIG = f"""
[checks.positive_data_acceptance]
expected-statuses = {ACCEPTED!r}

[checks.negative_data_rejection]
expected-statuses = {REFUSED!r}

# A suite travels as JSONL text: a value the fuzzer means as "not a string" reaches the
# wire as text the schema allows, and only the rules of its lines refuse it (422).
[[operations]]
include-operation-id = "import_suite"

[operations.checks.negative_data_rejection]
expected-statuses = {[*REFUSED, "422"]!r}

[[operations]]
include-operation-id = "replace_suite"

[operations.checks.negative_data_rejection]
expected-statuses = {[*REFUSED, "412", "422"]!r}
"""
# Examples per operation: at 25 the fuzzer missed a refusal of POST /api/evaluations/
# it finds at 100.
MAX_EXAMPLES = "100"


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    llm = FakeLLM().start()
    for model in MODELS:
        llm.script(model, votes="AAA")
    # No rate limits: the fuzzer sends many creations at once.
    site = LiveMagi(
        tmp_path_factory.mktemp("contract"),
        llm.base_url,
        users=1,
        LOG_LEVEL="WARNING",
        MAGI_RATE_LIMIT_PER_USER="0",
        MAGI_RATE_LIMIT_PER_TOKEN="0",
        MAGI_UNFINISHED_PER_USER="0",
        MAGI_UNFINISHED_RUNS_PER_USER="0",
        # The bundled smollm2-135m stays in the document's model enum, but its runtime is
        # one that is not installed: its judgements end in Error at once instead of
        # loading a real model on the CPU for minutes while a ?wait= blocks.
        MAGI_LOCAL_RUNTIME="llama-cpp-python",
    ).start()
    username = site.usernames[0]
    # Staff: the review endpoints answer for real, not only 403.
    site.manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model; get_user_model().objects"
        f".filter(username={username!r}).update(is_staff=True)",
    )
    site.token = site.manage("api_token", username).strip()
    yield site
    site.stop()
    llm.stop()


def existing_ids(live) -> dict[str, int]:
    """A finished judgement, a suite and a run of it, a team, its panel and the panel's
    budget: what the second pass reads, reviews, cancels, changes and deletes instead of
    ids that do not exist."""
    judgement = call(live, "POST", "/api/judgements/?wait=60", json.dumps(CASE))
    line = {"id": "c1", "title": "Trip", "content": CASE["content"], "expected": "approve"}
    suite = call(live, "POST", "/api/suites/?name=Contract", json.dumps(line))
    run = {"agents": CASE["agents"], "suite": suite["id"]}
    started = call(live, "POST", "/api/evaluations/", json.dumps(run))
    team = call(live, "POST", "/api/teams/", json.dumps({"name": "Contract"}))
    panel = {"name": "Contract", "agents": CASE["agents"], "team": "Contract"}
    made = call(live, "POST", "/api/panels/", json.dumps(panel))
    limit = {"panel": made["id"], "period": "day", "limit_tokens": 1_000_000}
    budget = call(live, "POST", "/api/budgets/", json.dumps(limit))
    return {
        "judgement_id": judgement["id"], "suite_id": suite["id"], "run_id": started["id"],
        "team_id": team["id"], "panel_id": made["id"], "budget_id": budget["id"],
    }  # fmt: skip


def call(live, method: str, path: str, body: str | None = None) -> dict:
    request = urllib.request.Request(
        live.url + path,
        data=None if body is None else body.encode(),
        method=method,
        headers={"Authorization": f"Bearer {live.token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=90) as response:
        return json.loads(response.read())


def schemathesis_run(live, config: Path, *extra: str) -> subprocess.CompletedProcess:
    """The schemathesis command line, as a CI job would run it; its cache and reports go
    beside the config file."""
    return subprocess.run(
        [
            sys.executable, "-m", "schemathesis.cli", "--config-file", str(config),
            "run", f"{live.url}/api/schema.json",
            "--header", f"Authorization: Bearer {live.token}",
            "--checks", ",".join(CHECKS),
            "--phases", "examples,coverage,fuzzing",
            "--seed", "1",
            "--workers", "1",
            "--request-timeout", "30",
            "--generation-database", "none",
            "--no-color",
            *extra,
        ],
        cwd=config.parent,
        env={
            **os.environ,
            "PYTHONPATH": str(REPO),
            "SCHEMATHESIS_HOOKS": "tests.support.schemathesis_hooks",
        },
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip


def test_schemathesis_finds_nothing_against_a_running_magi(live, tmp_path):
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG)
    run = schemathesis_run(live, config, "--max-examples", MAX_EXAMPLES)
    assert run.returncode == 0, run.stdout[-8000:] + run.stderr[-2000:]
    assert "generated" in run.stdout and "passed" in run.stdout, run.stdout[-3000:]


def test_schemathesis_finds_nothing_on_what_exists(live, tmp_path):
    ids = existing_ids(live)
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG + "\n[parameters]\n" + "".join(f"{k} = {v}\n" for k, v in ids.items()))
    run = schemathesis_run(
        live,
        config,
        "--max-examples",
        MAX_EXAMPLES,
        "--include-path-regex",
        r"\{(judgement|run|suite|team|panel|budget)_id\}",
    )
    assert run.returncode == 0, run.stdout[-8000:] + run.stderr[-2000:]
    assert "generated" in run.stdout and "passed" in run.stdout, run.stdout[-3000:]
