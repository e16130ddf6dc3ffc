"""Suites over the HTTP API (judgements/api/kinds.py's Suites, api/suite_endpoints.py):
uploaded as JSONL to a team, replaced and deleted with ETags, kept as they are once runs
were made on them. Every answer is checked against /api/schema.json."""

import json

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model

from judgements.configuration import teams
from judgements.models import ApiToken, AuditEntry, AuditSubject, EvaluationRun, Suite, Team
from tests.support.api_client import TokenClient
from tests.support.cases import case_for
from tests.support.openapi import check

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fake_llm")]

LIST, JSONL, ONE = "/api/suites/", "/api/suites/{suite_id}.jsonl", "/api/suites/{suite_id}/"
TYPE = "application/jsonl"


def lines(*expected: str) -> str:
    return "".join(
        json.dumps({"id": f"c{n}", "content": f"Case {n}.", "expected": verdict}) + "\n"
        for n, verdict in enumerate(expected, start=1)
    )


@pytest.fixture
def people(db):
    users = get_user_model().objects
    return {name: users.create_user(name, password="pw") for name in ("ana", "bot", "eve")}


@pytest.fixture
def bot(people) -> TokenClient:
    team = Team.objects.create(name="Payments")
    teams.set_members(team, [people["ana"], people["bot"]], None)
    token, key = ApiToken.issue(people["bot"], "config")
    teams.assign(token, team)
    return TokenClient(f"Bearer {key}")


@pytest.fixture
def eve(people) -> TokenClient:
    return TokenClient(f"Bearer {ApiToken.issue(people['eve'], 'config')[1]}")


def at(path: str, suite_id: int, query: str = "") -> str:
    return path.replace("{suite_id}", str(suite_id)) + (f"?{query}" if query else "")


async def test_a_team_token_uploads_a_suite_of_its_team_and_replaces_it(bot, document):
    response = await bot.post(LIST + "?name=Smoke", lines("approve"), TYPE)
    made = check(document, LIST, "post", response)
    assert response.status_code == 201 and response["ETag"] == made["etag"]
    assert (made["team"], made["owner"], made["cases"], made["version"]) == (
        "Payments",
        "bot",
        1,
        1,
    )
    read = await bot.get(at(ONE, made["id"]))
    assert check(document, ONE, "get", read)["etag"] == made["etag"] == read["ETag"]
    changed = await bot.put(
        at(JSONL, made["id"], "name=Smoke&description=Two"), lines("approve", "reject"), TYPE,
        headers={"If-Match": made["etag"]},
    )  # fmt: skip
    now = check(document, JSONL, "put", changed)
    assert (now["cases"], now["description"], now["version"]) == (2, "Two", 2)
    exported = await bot.get(at(JSONL, made["id"]))
    assert exported.content.decode() == lines("approve", "reject")
    stale = await bot.put(
        at(JSONL, made["id"], "name=Smoke"), lines("reject"), TYPE,
        headers={"If-Match": made["etag"]},
    )  # fmt: skip
    assert stale.status_code == 412 and check(document, JSONL, "put", stale)["etag"] == now["etag"]
    entries = AuditEntry.objects.filter(subject=AuditSubject.SUITE)
    assert await entries.acount() == 2


async def test_a_bad_line_names_it_and_changes_nothing(bot, document):
    made = (await bot.post(LIST + "?name=Smoke", lines("approve"), TYPE)).json()
    bad = lines("approve") + json.dumps({"id": "c2", "content": "x", "expected": "maybe"}) + "\n"
    refused = await bot.put(
        at(JSONL, made["id"], "name=Smoke"), bad, TYPE, headers={"If-Match": "*"}
    )
    assert refused.status_code == 422
    assert set(check(document, JSONL, "put", refused)["errors"]) == {"line 2.expected"}
    assert (await bot.get(at(JSONL, made["id"]))).content.decode() == lines("approve")


async def test_a_label_the_rule_cannot_give_is_a_422_naming_the_line(bot, document):
    bad = json.dumps(
        {
            "id": "one-fails",
            "content": "x",
            "expected": "reject",
            "expected_agents": ["approve", "approve", "reject"],
        }
    )
    refused = await bot.post(LIST + "?name=Smoke", lines("approve") + bad + "\n", TYPE)
    assert refused.status_code == 422
    errors = check(document, LIST, "post", refused)["errors"]
    assert list(errors) == ["line 2.expected"]
    assert errors["line 2.expected"][0].startswith("Case 'one-fails' expects 'reject'")
    assert not await Suite.objects.aexists()


async def test_a_suite_with_runs_keeps_its_cases_and_is_not_deleted(bot, people, document):
    made = (await bot.post(LIST + "?name=Smoke", lines("approve"), TYPE)).json()
    suite = await Suite.objects.aget(pk=made["id"])
    await EvaluationRun.objects.acreate(
        panel_name="p", agents=case_for()["agents"], suite=suite, creator=people["bot"]
    )
    other = await bot.put(
        at(JSONL, made["id"], "name=Smoke"), lines("reject"), TYPE, headers={"If-Match": "*"}
    )
    assert other.status_code == 409
    check(document, JSONL, "put", other)
    renamed = await bot.put(
        at(JSONL, made["id"], "name=Smoke+2"), lines("approve"), TYPE, headers={"If-Match": "*"}
    )
    assert renamed.status_code == 200 and renamed.json()["name"] == "Smoke 2"
    kept = await bot.delete(at(ONE, made["id"]), headers={"If-Match": "*"})
    assert kept.status_code == 409 and await Suite.objects.filter(pk=made["id"]).aexists()


async def test_a_suite_is_deleted_with_its_etag_and_another_team_s_is_not_found(bot, eve):
    made = (await bot.post(LIST + "?name=Smoke", lines("approve"), TYPE)).json()
    assert (await eve.get(at(ONE, made["id"]))).status_code == 404
    assert (await eve.delete(at(ONE, made["id"]), headers={"If-Match": "*"})).status_code == 404
    put = await eve.put(
        at(JSONL, made["id"], "name=Mine"), lines("reject"), TYPE, headers={"If-Match": "*"}
    )
    assert put.status_code == 404
    gone = await bot.delete(at(ONE, made["id"]), headers={"If-Match": made["etag"]})
    assert gone.status_code == 204 and not await Suite.objects.aexists()


async def test_a_team_s_suites_have_distinct_names(bot):
    await bot.post(LIST + "?name=Smoke", lines("approve"), TYPE)
    again = await bot.post(LIST + "?name=SMOKE&team=Payments", lines("approve"), TYPE)
    assert again.status_code == 422 and set(again.json()["errors"]) == {"name"}
    assert await Suite.objects.acount() == 1


async def test_a_suite_s_query_refused_names_each_parameter(bot, document):
    boolean = "Input should be a valid boolean, unable to interpret input"
    for query, named in [
        ("", {"name": ["This field is required."]}),
        ("name=", {"name": ["Must not be empty."]}),
        ("name=Smoke&team=", {"team": ["Must not be empty."]}),
        ("name=Smoke&example=maybe", {"example": [boolean]}),
    ]:
        refused = await bot.post(LIST + (f"?{query}" if query else ""), lines("approve"), TYPE)
        # A query the document's schema refuses is a 400, as every other parameter's.
        assert refused.status_code == 400, query
        assert check(document, LIST, "post", refused)["errors"] == named, query
    assert not await Suite.objects.aexists()


async def test_staff_make_an_example_suite_and_it_stays_one(bot, people, document):
    await get_user_model().objects.filter(username="ana").aupdate(is_staff=True)
    ana = await get_user_model().objects.aget(username="ana")
    staff = TokenClient(f"Bearer {(await sync_to_async(ApiToken.issue)(ana, 'x'))[1]}")
    shared = LIST + "?name=Shared&example=true"
    assert (await bot.post(shared, lines("approve"), TYPE)).status_code == 403
    response = await staff.post(shared, lines("approve"), TYPE)
    made = check(document, LIST, "post", response)
    assert (made["example"], made["owner"], made["team"]) == (True, None, None)
    anyone = {"If-Match": "*"}
    owned = await staff.put(
        at(JSONL, made["id"], "name=Shared"), lines("reject"), TYPE, headers=anyone
    )
    assert owned.status_code == 422 and set(owned.json()["errors"]) == {"example"}
    query = "name=Shared&example=true"
    kept = await staff.put(at(JSONL, made["id"], query), lines("reject"), TYPE, headers=anyone)
    assert kept.status_code == 200 and kept.json()["example"] is True
