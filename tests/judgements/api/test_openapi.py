"""GET /api/schema.json describes the API: real answers of every endpoint, successes and
errors, validate against it (judgements/api/openapi.py)."""

import json
import re

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient
from django.utils import timezone
from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for

from judgements.api import urls
from judgements.intake.cases import validate_case
from judgements.intake.start import Submission, start_judgement
from judgements.models import ApiToken, Judgement, Status
from tests.support.api_client import TokenClient
from tests.support.cases import case_for
from tests.support.openapi import check

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("empty_engine_channel"),
]


@pytest.fixture
async def document() -> dict:
    response = await AsyncClient().get("/api/schema.json")
    assert response.status_code == 200
    return response.json()


@pytest.fixture
def api(user) -> TokenClient:
    return TokenClient(f"Bearer {ApiToken.issue(user, 'tests')[1]}")


@pytest.fixture
def staff_api(django_user_model) -> TokenClient:
    staff = django_user_model.objects.create_user("ops", is_staff=True)
    return TokenClient(f"Bearer {ApiToken.issue(staff, 'tests')[1]}")


async def post_case(api, case, headers=None, query=""):
    return await api.post(
        f"/api/judgements/{query}",
        json.dumps(case) if not isinstance(case, str) else case,
        content_type="application/json",
        headers=headers or {},
    )


def test_the_document_is_openapi_3_1_with_valid_schemas(client):
    document = client.get("/api/schema.json").json()
    assert document["openapi"].startswith("3.1")
    for schema in document["components"]["schemas"].values():
        validator_for(schema).check_schema(schema)


def test_every_api_route_is_described(client):
    described = set(client.get("/api/schema.json").json()["paths"])
    routes = {
        "/" + re.sub(r"<int:(\w+)>", r"{\1}", str(pattern.pattern))
        for pattern in urls.urlpatterns
        if str(pattern.pattern).startswith("api/") and "^" not in str(pattern.pattern)
    }
    assert routes == described


async def test_submits_and_reads_match_the_document(fake_llm, api, document):
    path = "/api/judgements/"
    created = check(document, path, "post", await post_case(api, case_for()))
    replayed = await post_case(api, case_for(), {"Idempotency-Key": "k1"})
    check(document, path, "post", replayed)
    check(document, path, "post", await post_case(api, case_for(), {"Idempotency-Key": "k1"}))
    one = f"/api/judgements/{created['id']}/"
    check(document, "/api/judgements/{judgement_id}/", "get", await api.get(one))
    listed = check(document, path, "get", await api.get(path))
    assert len(listed["judgements"]) == 2


async def test_errors_match_the_document(fake_llm, api, document, settings):
    path = "/api/judgements/"
    invalid = await post_case(api, case_for(content=""))
    assert check(document, path, "post", invalid)["errors"] == {
        "content": ["This field is required."]
    }
    assert (await post_case(api, "{nope")).status_code == 400
    check(document, path, "post", await post_case(api, "{nope"))
    check(document, path, "post", await post_case(api, case_for(), query="?wait=soon"))
    unauthorized = await TokenClient(None).post(
        path, json.dumps(case_for()), content_type="application/json"
    )
    check(document, path, "post", unauthorized)
    check(document, path, "get", await TokenClient("Bearer nope").get(path))
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 200
    too_big = await post_case(api, case_for(content="x" * 500))
    assert too_big.status_code == 413
    check(document, path, "post", too_big)
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1_000_000
    await post_case(api, case_for(), {"Idempotency-Key": "k2"})
    conflict = await post_case(api, case_for(title="Other"), {"Idempotency-Key": "k2"})
    assert conflict.status_code == 422
    check(document, path, "post", conflict)
    settings.MAGI_RATE_LIMIT_PER_USER = 1
    limited = await post_case(api, case_for())
    assert limited.status_code == 429
    check(document, path, "post", limited)
    missing = await api.get("/api/judgements/999999/")
    assert missing.status_code == 404
    check(document, "/api/judgements/{judgement_id}/", "get", missing)


async def test_overrides_match_the_document(fake_llm, api, staff_api, user, document):
    path = "/api/judgements/{judgement_id}/override"
    case = validate_case(case_for())
    judgement = (await sync_to_async(start_judgement)(case, Submission(creator=user))).judgement
    url = f"/api/judgements/{judgement.pk}/override"
    body = json.dumps({"decision": "reject", "reason": "Not on a Friday."})

    async def override(client, data=body):
        return await client.post(url, data, content_type="application/json")

    unfinished = await override(staff_api)
    assert unfinished.status_code == 409
    check(document, path, "post", unfinished)
    await Judgement.objects.filter(pk=judgement.pk).aupdate(
        status=Status.APPROVED, finished_at=timezone.now()
    )
    forbidden = await override(api)
    assert forbidden.status_code == 403
    check(document, path, "post", forbidden)
    bad = await override(staff_api, json.dumps({"decision": "approve"}))
    assert bad.status_code == 400
    check(document, path, "post", bad)
    done = check(document, path, "post", await override(staff_api))
    assert (done["status"], done["panel_status"]) == ("rejected", "approved")
    second = await override(staff_api)
    assert second.status_code == 409
    check(document, path, "post", second)
    read = await api.get(f"/api/judgements/{judgement.pk}/")
    check(document, "/api/judgements/{judgement_id}/", "get", read)
    check(document, "/api/judgements/", "get", await api.get("/api/judgements/"))
    missing = await TokenClient(None).post(url, body, content_type="application/json")
    check(document, path, "post", missing)
    not_found = await staff_api.post(
        "/api/judgements/999999/override", body, content_type="application/json"
    )
    assert not_found.status_code == 404
    check(document, path, "post", not_found)


async def test_the_document_refuses_an_answer_that_does_not_match(document):
    """The check above can fail: a result with an unknown status does not validate."""
    schema = {
        **document["components"]["schemas"]["Judgement"],
        "components": document["components"],
    }
    result = {
        "id": 1, "title": "t", "status": "probably", "panel_status": "approved",
        "contested": False, "contest_reasons": [], "hold_contested": False,
        "override": None, "confirmation": None, "error": None, "panel": None, "agents": [],
    }  # fmt: skip
    assert not Draft202012Validator(schema).is_valid(result)
    assert Draft202012Validator(schema).is_valid({**result, "status": "approved"})
