"""Many configuration changes in one transaction (judgements/api/batch_endpoints.py): all
of them, or, when one is refused, none, the refusal naming the operation and its field.
Every answer is checked against /api/schema.json."""

import json

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model

from judgements.models import ApiToken, AuditEntry, Budget, Panel, Suite, Team
from tests.support.api_client import TokenClient
from tests.support.cases import case_for
from tests.support.openapi import check

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fake_llm")]

BATCH, JSON = "/api/batch/", "application/json"
SUITE = json.dumps({"id": "c1", "content": "A laptop.", "expected": "approve"}) + "\n"


@pytest.fixture
def staff(db) -> TokenClient:
    users = get_user_model().objects
    root = users.create_user("root", password="pw", is_staff=True)
    users.create_user("ana", password="pw")
    users.create_user("eve", password="pw")
    return TokenClient(f"Bearer {ApiToken.issue(root, 'config')[1]}")


def team_setup(reviewers: list[str]) -> list[dict]:
    """A team, its panel, a suite of it and a budget of the panel, named by names."""
    panel = {"name": "Deploy gate", "agents": case_for()["agents"], "team": "Payments",
             "reviewers": reviewers}  # fmt: skip
    return [
        {"method": "POST", "path": "/api/teams/", "body": {"name": "Payments", "members": ["ana"]}},
        {"method": "POST", "path": "/api/panels/", "body": panel},
        {"method": "POST", "path": "/api/suites/?name=Smoke&team=Payments", "body": SUITE},
        {"method": "POST", "path": "/api/budgets/",
         "body": {"panel": "Deploy gate", "period": "day", "limit_tokens": 5000}},
    ]  # fmt: skip


async def test_a_batch_makes_everything_in_order_by_names(staff, document):
    response = await staff.post(BATCH, {"operations": team_setup(["ana"])}, JSON)
    results = check(document, BATCH, "post", response)["results"]
    assert [r["status"] for r in results] == [201, 201, 201, 201]
    team, panel, suite, budget = (r["body"] for r in results)
    assert (panel["team"], panel["reviewers"], suite["team"]) == ("Payments", ["ana"], "Payments")
    assert (budget["panel"], budget["panel_name"]) == (panel["id"], "Deploy gate")
    assert all(r["etag"] == r["body"]["etag"] for r in results)
    assert team["members"] == ["ana"]


async def test_a_refusal_in_the_middle_changes_nothing_and_names_the_operation(staff, document):
    response = await staff.post(BATCH, {"operations": team_setup(["eve"])}, JSON)
    refused = check(document, BATCH, "post", response)
    assert response.status_code == 422 and refused["operation"] == 1
    assert set(refused["errors"]) == {"operations[1].body.reviewers"}
    for model in (Team, Panel, Suite, Budget, AuditEntry):
        assert not await model.objects.aexists(), model


async def test_a_stale_etag_in_a_batch_answers_412_and_changes_nothing(staff, document):
    made = (await staff.post(BATCH, {"operations": team_setup([])}, JSON)).json()["results"]
    team, panel = made[0]["body"], made[1]["body"]
    operations = [
        {"method": "PUT", "path": f"/api/teams/{team['id']}/", "if_match": team["etag"],
         "body": {"name": "Payments", "members": []}},
        {"method": "DELETE", "path": f"/api/panels/{panel['id']}/", "if_match": '"panel-0-0-0"'},
    ]  # fmt: skip
    response = await staff.post(BATCH, {"operations": operations}, JSON)
    refused = check(document, BATCH, "post", response)
    assert response.status_code == 412 and refused["operation"] == 1
    assert refused["etag"] == panel["etag"]
    assert await Team.objects.filter(members__username="ana").aexists()
    assert await Panel.objects.aexists()


async def test_what_a_batch_does_not_take_is_refused_by_its_path(staff, document):
    for operation, status, field in (
        ({"method": "POST", "path": "/api/users/", "body": {}}, 422, "operations[0].path"),
        ({"method": "PUT", "path": "/api/teams/1/", "body": {}}, 422, "operations[0].if_match"),
        ({"method": "POST", "path": "/api/suites/?name=S", "body": {}}, 422, "operations[0].body"),
    ):  # fmt: skip
        response = await staff.post(BATCH, {"operations": [operation]}, JSON)
        assert response.status_code == status, response.json()
        assert set(check(document, BATCH, "post", response)["errors"]) == {field}


async def test_a_dry_run_answers_and_stores_nothing(staff):
    response = await staff.post(BATCH + "?dry_run=true", {"operations": team_setup(["ana"])}, JSON)
    assert response.status_code == 200 and len(response.json()["results"]) == 4
    assert not await Team.objects.aexists() and not await Panel.objects.aexists()


PARTS = "/api/batch/parts/"


async def test_a_batch_sent_as_parts_is_still_one_transaction(staff, document, settings):
    """Issue 49: a batch larger than one body is sent as parts; the batch naming them runs
    every operation in one transaction, all or nothing, and consumes the parts."""
    limits = check(document, BATCH, "get", await staff.get(BATCH))
    assert limits == {"max_body_bytes": settings.DATA_UPLOAD_MAX_MEMORY_SIZE, "max_operations": 500}
    first, second, last = team_setup(["eve"])[:1], team_setup(["eve"])[1:3], team_setup([])[3:]
    keys = []
    for part in (first, second):
        made = await staff.post(PARTS, {"operations": part}, JSON)
        keys.append(check(document, PARTS, "post", made)["part"])
    # The panel (reviewer eve, not a member) is refused: nothing of any part stays.
    response = await staff.post(BATCH, {"operations": last, "parts": keys}, JSON)
    refused = check(document, BATCH, "post", response)
    assert response.status_code == 422 and refused["operation"] == 1
    for model in (Team, Panel, Suite, Budget, AuditEntry):
        assert not await model.objects.aexists(), model
    # Consumed: naming them again is refused.
    again = await staff.post(BATCH, {"operations": last, "parts": keys}, JSON)
    assert again.status_code == 422
    assert set(check(document, BATCH, "post", again)["errors"]) == {"parts[0]", "parts[1]"}

    keys = []
    for part in (team_setup(["ana"])[:1], team_setup(["ana"])[1:3]):
        keys.append((await staff.post(PARTS, {"operations": part}, JSON)).json()["part"])
    done = await staff.post(BATCH, {"operations": last, "parts": keys}, JSON)
    results = check(document, BATCH, "post", done)["results"]
    assert [r["status"] for r in results] == [201, 201, 201, 201]
    assert await Budget.objects.filter(panel__name="Deploy gate").aexists()


async def test_a_part_is_its_senders_alone(staff, document):
    key = (await staff.post(PARTS, {"operations": team_setup([])[:1]}, JSON)).json()["part"]
    eve = await get_user_model().objects.aget(username="eve")
    _, eves_key = await sync_to_async(ApiToken.issue)(eve, "config")
    other = TokenClient(f"Bearer {eves_key}")
    response = await other.post(BATCH, {"operations": team_setup([])[1:2], "parts": [key]}, JSON)
    assert response.status_code == 422 and list(response.json()["errors"]) == ["parts[0]"]
