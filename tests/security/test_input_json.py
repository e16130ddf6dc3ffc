"""JSON a client should not send, through the API and the command line: what the parser
cannot take, fields nobody reads, bodies over the limit; and every API answer is JSON
(issue 9, items 2, 8 and 9)."""

import json

import pytest
from django.test import Client

from judgements.models import Judgement
from tests.support.cases import case_for
from tests.support.inputs import api_answer

pytestmark = pytest.mark.django_db(transaction=True)

UNPARSEABLE = {
    "deep-list": b"[" * 100_000,
    "deep-object": b'{"a":' * 50_000,
    "deep-mixed": b'[{"a":' * 40_000,
    "deep-in-a-field": b'{"title": ' + b"[" * 100_000,
    "long-number": b"1" * 5_000,
    "long-number-in-a-field": b'{"title": "x", "content": ' + b"9" * 5_000 + b"}",
    "long-negative-number": b"-" + b"7" * 10_000,
    "truncated": b'{"title": "Trip',
    "empty": b"",
    "nan-only": b"NaN garbage",
    "trailing-comma": b'{"title": "x",}',
}


@pytest.mark.parametrize("body", UNPARSEABLE.values(), ids=UNPARSEABLE.keys())
def test_json_the_parser_cannot_take_is_a_clear_error(entry, body):
    api = entry.api(body)
    assert api.status == 400 and list(api.errors) == ["case"]
    assert "JSON" in api.errors["case"][0] or "deeply" in api.errors["case"][0]
    cli = entry.cli(body)
    assert cli.status == 2
    assert cli.text.startswith("invalid input: case: ") and "Traceback" not in cli.text
    assert Judgement.objects.count() == 0


def unknown_field_cases():
    yield "priority", lambda c: c.update(priority="high")
    yield "Title", lambda c: c.update(Title="typo of title")
    yield "id", lambda c: c.update(id=7)
    yield "agents[0].temperature", lambda c: c["agents"][0].update(temperature=0.2)
    yield "agents[2].Model", lambda c: c["agents"][2].update(Model="model-a")
    yield "agents[1].", lambda c: c["agents"][1].update({"": "empty key"})
    yield "agents[1].naem", lambda c: c["agents"][1].update(naem="typo")
    yield "\u00e9t\u00e9", lambda c: c.update({"\u00e9t\u00e9": 1})


@pytest.mark.parametrize(("path", "change"), list(unknown_field_cases()))
def test_an_unknown_field_is_refused_naming_it(entry, path, change):
    case = case_for()
    change(case)
    api = entry.api(case)
    assert api.status == 400
    assert api.errors == {path: [api.errors[path][0]]}
    assert api.errors[path][0].startswith("Unknown field")
    cli = entry.cli(case)
    assert cli.status == 2 and f"invalid input: {path}: Unknown field" in cli.text
    assert Judgement.objects.count() == 0


def test_the_unknown_field_message_lists_every_field_the_entry_takes(entry):
    # The API also takes a saved panel and a callback URL; the command line a panel.
    api = entry.api(case_for(priority="high"))
    assert api.errors["priority"] == [
        "Unknown field; the fields here are title, content, agents, panel, hold_contested, "
        "callback_url."
    ]
    cli = entry.cli(case_for(priority="high"))
    assert "the fields here are title, content, agents, panel, hold_contested." in cli.text


def test_every_unknown_field_is_named_at_once(entry):
    case = case_for(priority=1, tags=[])
    case["agents"][0]["temperature"] = 0.1
    case["agents"][2]["seed"] = 1
    api = entry.api(case)
    assert sorted(api.errors) == ["agents[0].temperature", "agents[2].seed", "priority", "tags"]


@pytest.mark.parametrize("excess", [1, 1000, 3_000_000])
def test_a_body_over_the_limit_is_413_json(entry, settings, excess):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 50_000
    body = json.dumps(case_for(content="x" * (50_000 + excess))).encode()
    api = entry.api_body(body)
    assert api.status == 413
    assert "50,000 bytes" in json.loads(api.text)["error"]
    assert Judgement.objects.count() == 0


def test_a_body_at_the_limit_is_read(entry, settings):
    body = json.dumps(case_for(content="Trip " * 1000)).encode()
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = len(body)
    assert entry.api_body(body).status == 201


def test_the_largest_valid_case_fits_the_default_limit(entry):
    # The longest content and criteria, in the characters JSON escapes the most.
    from judgements.intake.cases import CRITERIA_MAX_CHARS, NAME_MAX_CHARS, TITLE_MAX_CHARS
    from magi_site.settings import MAGI

    emoji = "\U0001f600"
    case = case_for(title=emoji * TITLE_MAX_CHARS, content=emoji * MAGI.magi_content_max_chars)
    for agent in case["agents"]:
        agent["criteria"] = emoji * CRITERIA_MAX_CHARS
    for number, agent in enumerate(case["agents"]):
        agent["name"] = str(number) + emoji * (NAME_MAX_CHARS - 1)
    body = json.dumps(case).encode()  # ensure_ascii: 12 bytes per emoji
    assert len(body) <= MAGI.magi_max_body_bytes
    assert entry.api_body(body).status == 201


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("get", "/api/", 404),
        ("get", "/api/nope/", 404),
        ("get", "/api/judgements/abc/", 404),
        ("get", "/api/judgements/1/extra/", 404),
        ("get", "/api/judgements", 404),
        ("post", "/api/judgements", 404),
        ("get", "/api/judgements/999999/", 404),
        ("get", "/api/judgements/99999999999999999999999999/", 404),
        ("delete", "/api/judgements/", 405),
        ("put", "/api/judgements/1/", 405),
        ("patch", "/api/nope", 404),
    ],
)
def test_every_api_answer_is_json(entry, method, path, status):
    response = getattr(entry.api_client, method)(path, headers=entry.auth)
    answer = api_answer(response)
    assert answer.status == status
    assert json.loads(answer.text)["error"]


@pytest.mark.parametrize("path", ["/api/nope", "/api/judgements/abc/override"])
def test_a_post_to_no_api_is_a_json_404_even_where_csrf_is_enforced(entry, path):
    # Found by schemathesis against daphne: Django's CSRF check answered HTML 403 first.
    client = Client(enforce_csrf_checks=True)
    answer = api_answer(client.post(path, "{}", "application/json", headers=entry.auth))
    assert answer.status == 404 and "/api/docs" in json.loads(answer.text)["error"]


def test_an_unexpected_failure_in_the_api_is_500_json(entry, settings, caplog):
    # A provider configuration that cannot be read makes validation itself fail.
    settings.MAGI_PROVIDERS = None
    response = entry.api_client.post(
        "/api/judgements/", json.dumps(case_for()), "application/json", headers=entry.auth
    )
    answer = api_answer(response)
    assert answer.status == 500
    assert "Traceback" not in answer.text
    assert "API request POST /api/judgements/ failed" in caplog.text
