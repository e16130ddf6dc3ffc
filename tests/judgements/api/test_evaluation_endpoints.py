"""The HTTP API of evaluations (judgements/api/evaluation_endpoints.py): suites in and out as
JSONL, runs started and read. Every answer is checked against /api/schema.json."""

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async

from judgements.evaluations import suites
from judgements.intake import schemas
from judgements.models import EvaluationRun, Judgement, Status, Suite
from tests.support.api_client import TokenClient
from tests.support.cases import case_for
from tests.support.evaluations import jsonl
from tests.support.openapi import body_allowed, check

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("empty_engine_channel"),
]

AGENTS = case_for()["agents"]
CASES = (
    {"id": "c1", "content": "marker-ok: a laptop for 900 EUR.", "expected": "approve"},
    {"id": "c2", "content": "marker-no: a yacht for the team.", "expected": "reject"},
)
VOTES = {
    "model-a": {"marker-ok": "AAA", "marker-no": "AAA"},
    "model-b": {"marker-ok": "AAA", "marker-no": "RRR"},
    "model-c": {"marker-ok": "RRR", "marker-no": "RRR"},
}
SUITES = "/api/suites/"
RUNS = "/api/evaluations/"


@pytest.fixture
def suite(user) -> Suite:
    return suites.import_suite(name="Gate cases", description="", owner=user, data=jsonl(*CASES))


@pytest.fixture
def panel(make_panel, user):
    return make_panel(name="Travel desk", owner=user)


async def post_suite(api, body: str | bytes, query: str = "?name=Trips"):
    return await api.post(f"{SUITES}{query}", body, content_type="application/jsonl")


async def post_run(api, body):
    data = body if isinstance(body, str) else json.dumps(body)
    return await api.post(RUNS, data, content_type="application/json")


async def finish(run_id: int) -> None:
    from judgements.engine.runner import EngineRunner

    runner = EngineRunner(worker_id="test-worker")
    ids = [
        pk
        async for pk in Judgement.objects.filter(
            evaluation_run_id=run_id, status=Status.IDLE
        ).values_list("pk", flat=True)
    ]
    assert all(await asyncio.gather(*(runner.run_judgement(pk) for pk in ids)))


# --- suites ----------------------------------------------------------------------------


async def test_a_jsonl_body_imports_a_suite(api, user, document):
    response = await post_suite(api, jsonl(*CASES), "?name=Trips&description=Travel%20cases")
    body = check(document, SUITES, "post", response)
    suite = await Suite.objects.aget()
    assert response.status_code == 201
    assert response["Location"] == f"/api/suites/{suite.pk}.jsonl"
    assert body == {
        "id": suite.pk,
        "name": "Trips",
        "description": "Travel cases",
        "example": False,
        "owner": user.username,
        "team": None,
        "cases": 2,
        "export": f"/api/suites/{suite.pk}.jsonl",
        "version": 1,
        "etag": response["ETag"],
    }
    assert suite.owner_id == user.pk
    assert [c async for c in suite.cases.values_list("case_id", flat=True)] == ["c1", "c2"]


async def test_a_bad_line_is_refused_naming_its_line_and_field(api, document):
    lines = jsonl(CASES[0], {**CASES[1], "expected": "maybe"}, {"id": "c3", "content": "x"})
    response = await post_suite(api, lines)
    body = check(document, SUITES, "post", response)
    # JSONL lines are not described field by field: what a line breaks is a rule (422).
    assert response.status_code == 422
    assert body["errors"] == {
        "line 2.expected": ["Must be 'approve' or 'reject'."],
        "line 3.expected": ["Must be 'approve' or 'reject'."],
    }
    assert not await Suite.objects.aexists()


@pytest.mark.parametrize(
    ("query", "body", "status", "errors"),
    [
        ("", jsonl(*CASES), 400, {"name": ["This field is required."]}),
        (
            "?name=Trips",
            "",
            400,
            {"cases": ["The suite holds no cases: write one JSON object a line."]},
        ),
        (
            "?name=Trips",
            "\n  \n",
            422,
            {"cases": ["The suite holds no cases: write one JSON object a line."]},
        ),
        (
            "?name=Trips&owner=bob",
            jsonl(*CASES),
            422,
            {
                "owner": [
                    "Unknown parameter; the parameters are name, description, team, example, "
                    "dry_run."
                ]
            },
        ),
        (
            "?name=Tr%FFips",
            jsonl(*CASES),
            422,
            {"name": ["Not valid UTF-8 once percent-decoded: send the text as UTF-8."]},
        ),
    ],
)
async def test_a_suite_without_a_good_name_or_cases_is_refused(
    api, document, query, body, status, errors
):
    response = await post_suite(api, body, query)
    assert response.status_code == status
    assert check(document, SUITES, "post", response)["errors"] == errors
    assert not await Suite.objects.aexists()


async def test_a_name_the_user_already_has_is_refused(api, suite, document):
    response = await post_suite(api, jsonl(*CASES), "?name=gate%20cases")
    assert check(document, SUITES, "post", response)["errors"] == {
        "name": ["There is already a suite called 'gate cases'."]
    }


async def test_a_suite_over_the_body_limit_is_refused(api, settings, document):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 50
    response = await post_suite(api, jsonl(*CASES))
    assert response.status_code == 413
    check(document, SUITES, "post", response)


async def test_the_list_holds_ones_own_and_the_shipped_suites(api, suite, other_user, document):
    await sync_to_async(suites.import_suite)(
        name="Shipped", description="", owner=None, data=jsonl(*CASES)
    )
    await sync_to_async(suites.import_suite)(
        name="Bob's", description="", owner=other_user, data=jsonl(*CASES)
    )
    listed = check(document, SUITES, "get", await api.get(SUITES))
    assert [(s["name"], s["example"], s["cases"]) for s in listed["suites"]] == [
        ("Gate cases", False, 2),
        ("Shipped", True, 2),
    ]


async def test_a_suite_exports_as_the_jsonl_it_imports_from(api, suite, document):
    path = "/api/suites/{suite_id}.jsonl"
    response = await api.get(f"/api/suites/{suite.pk}.jsonl")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/jsonl; charset=utf-8"
    exported = response.content.decode()
    assert exported == await sync_to_async(suites.export_jsonl)(suite)
    again = await post_suite(api, exported, "?name=Again")
    assert check(document, SUITES, "post", again)["cases"] == 2
    assert path in document["paths"]


async def test_another_users_suite_is_not_found(api, other_user, document):
    theirs = await sync_to_async(suites.import_suite)(
        name="Bob's", description="", owner=other_user, data=jsonl(*CASES)
    )
    response = await api.get(f"/api/suites/{theirs.pk}.jsonl")
    assert response.status_code == 404
    check(document, "/api/suites/{suite_id}.jsonl", "get", response)
    assert "marker" not in response.content.decode()


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", SUITES),
        ("get", "/api/suites/1.jsonl"),
        ("post", RUNS),
        ("get", "/api/evaluations/1/"),
    ],
)
async def test_every_path_needs_a_token(method, path, document):
    response = await getattr(TokenClient("Bearer nope"), method)(path)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="magi"'


async def test_other_methods_are_refused_naming_the_allowed_ones(api):
    for method, path, allowed in [
        ("delete", SUITES, "GET, HEAD, POST"),
        ("post", "/api/suites/1.jsonl", "GET, HEAD, PUT"),
        ("get", RUNS, "POST"),
        ("post", "/api/evaluations/1/", "GET, HEAD"),
    ]:
        response = await getattr(api, method)(path)
        assert response.status_code == 405
        assert response["Allow"] == allowed
        assert response.json() == {"error": f"Use {allowed.replace(', ', ' or ')}."}


async def test_head_answers_as_get_without_a_body(api):
    got, head = await api.get(SUITES), await api.head(SUITES)
    assert (head.status_code, head.content) == (200, b"")
    assert head["Content-Type"] == got["Content-Type"]


# --- runs ------------------------------------------------------------------------------


async def test_a_run_starts_from_a_saved_panel_and_a_suite_by_name(
    api, suite, panel, user, document
):
    response = await post_run(api, {"panel": "travel desk", "suite": "Gate cases", "repeat": 2})
    body = check(document, RUNS, "post", response)
    run = await EvaluationRun.objects.aget()
    assert response.status_code == 201
    assert response["Location"] == f"/api/evaluations/{run.pk}/"
    assert body["id"] == run.pk
    assert body["panel"] == {"id": panel.pk, "name": "Travel desk"}
    assert body["suite"] == {"id": suite.pk, "name": "Gate cases"}
    assert body["repeat"] == 2
    assert body["url"] == f"/evaluations/{run.pk}/"
    assert body["progress"] == {
        "total": 4,
        "finished": 0,
        "errors": 0,
        "running": 0,
        "done": False,
        "rounds": [{"round": n, "votes": 0, "of": 12} for n in (1, 2, 3)],
        "seconds_left": None,
    }
    assert body["report"] is None
    assert (run.creator_id, run.panel_id, run.repeats) == (user.pk, panel.pk, 2)


async def test_a_run_starts_from_agents_and_a_suite_id(api, suite, fake_llm, document):
    response = await post_run(api, {"agents": AGENTS, "suite": suite.pk})
    body = check(document, RUNS, "post", response)
    assert response.status_code == 201
    assert body["panel"] == {"id": None, "name": "Unsaved panel"}
    assert body["agents"] == AGENTS
    assert body["repeat"] == 1
    named = await post_run(api, {"agents": AGENTS, "panel_name": "Draft", "suite": str(suite.pk)})
    assert check(document, RUNS, "post", named)["panel"]["name"] == "Draft"


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        (
            {"panel": "Travel desk", "agents": AGENTS, "suite": "Gate cases"},
            {"panel": [schemas.BOTH_GIVEN]},
        ),
        (
            # Found by schemathesis: the document once allowed this one.
            {"panel": "Travel desk", "agents": AGENTS, "panel_name": "Mine", "suite": "Gate cases"},
            {"panel": [schemas.BOTH_GIVEN]},
        ),
        ({"suite": "Gate cases"}, {"panel": [schemas.NEITHER_GIVEN]}),
        (
            {"panel": "Nope", "suite": "Nope", "colour": "red"},
            {
                "colour": [
                    "Unknown field; the fields here are panel, agents, panel_name, suite, repeat."
                ]
            },
        ),
        ({"panel": "Travel desk"}, {"suite": ["This field is required."]}),
        (
            {"panel": "Travel desk", "suite": ["Gate cases"]},
            {"suite": ["Must be a suite's name (a string) or id (an integer)."]},
        ),
        (
            {"panel": "Travel desk", "panel_name": "Mine", "suite": "Gate cases"},
            {"panel_name": ['Only with "agents": a saved panel runs under its name.']},
        ),
        (
            {"panel": "Travel desk", "suite": "Gate cases", "repeat": 0},
            {"repeat": ["Must be a whole number from 1 to 20."]},
        ),
        (
            {
                "agents": [AGENTS[0], {**AGENTS[1], "model": "gpt-nope"}, AGENTS[2]],
                "suite": "Gate cases",
            },
            {"agents[1].model": ["Unknown model gpt-nope."]},
        ),
        ([], {"body": ['Must be a JSON object: {"panel" or "agents", "suite", "repeat"}.']}),
        (
            "{nope",
            {"body": ["The body is not valid JSON: Expecting property name enclosed in"]},
        ),
    ],
)
async def test_a_bad_run_is_refused_naming_each_field(api, suite, panel, document, body, errors):
    response = await post_run(api, body)
    got = check(document, RUNS, "post", response)["errors"]
    assert response.status_code == 400
    assert isinstance(body, str) or not body_allowed(document, RUNS, "post", body)
    assert list(got) == list(errors)
    for field, (message,) in errors.items():
        # The model's message goes on to list the deployment's models.
        assert got[field][0].startswith(message.removesuffix("."))
    assert not await EvaluationRun.objects.aexists()


async def test_a_whole_number_written_with_a_fraction_is_an_integer(api, suite, fake_llm, document):
    # JSON Schema's integer takes 2.0 (found by schemathesis): so does the API.
    response = await post_run(api, {"agents": AGENTS, "suite": float(suite.pk), "repeat": 2.0})
    assert response.status_code == 201, response.content
    assert check(document, RUNS, "post", response)["repeat"] == 2
    fraction = await post_run(api, {"agents": AGENTS, "suite": suite.pk, "repeat": 2.5})
    assert fraction.status_code == 400 and list(fraction.json()["errors"]) == ["repeat"]


async def test_a_run_naming_what_does_not_exist_is_unprocessable(api, suite, document):
    # The body is as the schema describes it; only the names are unknown: 422, not 400.
    body = {"panel": "Nope", "suite": "Nope"}
    assert body_allowed(document, RUNS, "post", body)
    response = await post_run(api, body)
    assert response.status_code == 422
    assert check(document, RUNS, "post", response)["errors"] == {
        "panel": ["No panel 'Nope' that you may use."],
        "suite": ["No suite 'Nope' that you may use."],
    }
    assert not await EvaluationRun.objects.aexists()


async def test_another_users_suite_or_panel_cannot_be_run(api, make_panel, other_user, document):
    theirs = await sync_to_async(suites.import_suite)(
        name="Bob's", description="", owner=other_user, data=jsonl(*CASES)
    )
    await sync_to_async(make_panel)(name="Bob's desk", owner=other_user)
    response = await post_run(api, {"panel": "Bob's desk", "suite": theirs.pk})
    assert check(document, RUNS, "post", response)["errors"] == {
        "panel": ['No panel "Bob\'s desk" that you may use.'],
        "suite": [f"No suite {theirs.pk} that you may use."],
    }


async def test_a_run_over_the_limit_of_unfinished_runs_is_refused(
    api, suite, panel, settings, document
):
    settings.MAGI_UNFINISHED_RUNS_PER_USER = 1
    first = await post_run(api, {"panel": "Travel desk", "suite": "Gate cases"})
    assert first.status_code == 201
    response = await post_run(api, {"panel": "Travel desk", "suite": "Gate cases"})
    body = check(document, RUNS, "post", response)
    assert response.status_code == 429
    assert response["Retry-After"] == str(body["retry_after"]) == "30"
    assert body["error"].startswith("You have 1 evaluation runs not finished yet")
    assert await EvaluationRun.objects.acount() == 1


async def test_a_run_reports_progress_then_its_report(api, suite, fake_llm, document):
    for model, votes in VOTES.items():
        fake_llm.script(model, votes_when=votes)
    created = check(
        document, RUNS, "post", await post_run(api, {"agents": AGENTS, "suite": suite.pk})
    )
    path, url = "/api/evaluations/{run_id}/", f"/api/evaluations/{created['id']}/"
    under_way = check(document, path, "get", await api.get(url))
    assert under_way["progress"]["done"] is False and under_way["report"] is None
    await finish(created["id"])
    done = check(document, path, "get", await api.get(url))
    assert done["progress"] == {
        "total": 2,
        "finished": 2,
        "errors": 0,
        "running": 0,
        "done": True,
        "rounds": [{"round": n, "votes": 6, "of": 6} for n in (1, 2, 3)],
        "seconds_left": None,
    }
    report = done["report"]
    # c1 approved by two of three (right), c2 rejected by two of three (right).
    assert report["accuracy"] == 1.0
    assert report["confusion"] == {
        "approve": {"approve": 1, "reject": 0},
        "reject": {"approve": 0, "reject": 1},
    }
    assert report["judgements"] == 2 and report["errors"] == 0


async def test_another_users_run_is_not_found(api, other_user, fake_llm, document):
    theirs = await sync_to_async(suites.import_suite)(
        name="Bob's", description="", owner=other_user, data=jsonl(*CASES)
    )
    from judgements.evaluations import runs

    run = await sync_to_async(runs.start_run)(
        panel=None, agents=AGENTS, panel_name="Bob's", suite=theirs, repeats=1, creator=other_user
    )
    response = await api.get(f"/api/evaluations/{run.pk}/")
    assert response.status_code == 404
    check(document, "/api/evaluations/{run_id}/", "get", response)


async def test_a_run_is_cancelled_through_the_api(api, suite, fake_llm, document, user):
    run = check(document, RUNS, "post", await post_run(api, {"agents": AGENTS, "suite": suite.pk}))
    url = f"{RUNS}{run['id']}/cancel"
    assert (await api.get(url)).status_code == 405
    response = await api.post(url)
    body = check(document, "/api/evaluations/{run_id}/cancel", "post", response)
    assert response.status_code == 200
    assert body["cancelled_by"] == "ada" and body["cancelled_at"]
    assert (body["progress"]["done"], body["progress"]["errors"]) == (True, 2)
    again = await api.post(url)
    check(document, "/api/evaluations/{run_id}/cancel", "post", again)
    assert again.status_code == 409
    assert again.json()["error"] == f"Evaluation run {run['id']} has already ended."
    missing = await api.post(f"{RUNS}999999/cancel")
    assert missing.status_code == 404
