"""Budgets over the HTTP API (judgements/api/kinds.py's Budgets): staff make, change and
remove them with ETags, everyone else reads; the admin's form validates both, each
refusal naming its field. Every answer is checked against /api/schema.json."""

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model

from judgements.configuration import teams
from judgements.models import ApiToken, AuditEntry, AuditSubject, Budget, Panel, Team
from tests.support.api_client import TokenClient
from tests.support.cases import case_for
from tests.support.openapi import check

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fake_llm")]

LIST, ONE = "/api/budgets/", "/api/budgets/{budget_id}/"
JSON = "application/json"


@pytest.fixture
def people(db):
    users = get_user_model().objects
    people = {name: users.create_user(name, password="pw") for name in ("root", "ana", "eve")}
    users.filter(username="root").update(is_staff=True)
    people["root"].refresh_from_db()
    return people


@pytest.fixture
def team(people):
    team = Team.objects.create(name="Payments")
    teams.set_members(team, [people["ana"]], None)
    return team


def client_of(user) -> TokenClient:
    return TokenClient(f"Bearer {ApiToken.issue(user, 'config')[1]}")


@pytest.fixture
def staff(people) -> TokenClient:
    return client_of(people["root"])


@pytest.fixture
def member(people, team) -> TokenClient:
    return client_of(people["ana"])


def day(**fields) -> dict:
    return {"period": "day"} | fields


def url(budget_id: int) -> str:
    return ONE.replace("{budget_id}", str(budget_id))


async def test_staff_make_a_team_budget_and_its_member_reads_it(staff, member, document):
    response = await staff.post(
        LIST, {"team": "Payments", "period": "day", "limit_tokens": 2000}, JSON
    )
    made = check(document, LIST, "post", response)
    assert response.status_code == 201 and response["ETag"] == made["etag"]
    assert (made["team"], made["user"], made["panel"], made["limit_tokens"]) == (
        "Payments",
        None,
        None,
        2000,
    )
    assert made["applies_to"] == "the team Payments" and made["version"] == 1
    read = await member.get(url(made["id"]))
    assert check(document, ONE, "get", read)["etag"] == made["etag"] == read["ETag"]
    listed = check(document, LIST, "get", await member.get(LIST))["budgets"]
    assert [b["id"] for b in listed] == [made["id"]]
    entry = (
        await AuditEntry.objects.filter(subject=AuditSubject.BUDGET).select_related("by").afirst()
    )
    assert entry is not None and entry.by is not None and entry.by.username == "root"
    assert entry.before is None


async def test_a_budget_changes_with_its_etag_and_a_stale_one_gets_412(staff, document):
    made = (await staff.post(LIST, {"user": "ana", "period": "month", "limit_usd": 5}, JSON)).json()
    sent = {"user": "ana", "period": "month", "limit_usd": 7.5}
    changed = await staff.put(url(made["id"]), sent, JSON, headers={"If-Match": made["etag"]})
    now = check(document, ONE, "put", changed)
    assert (now["limit_usd"], now["version"]) == (7.5, 2)
    stale = await staff.put(
        url(made["id"]), sent | {"limit_usd": 9}, JSON, headers={"If-Match": made["etag"]}
    )
    assert stale.status_code == 412 and check(document, ONE, "put", stale)["etag"] == now["etag"]
    assert str((await Budget.objects.aget(pk=made["id"])).limit_usd) == "7.5000"
    gone = await staff.delete(url(made["id"]), headers={"If-Match": now["etag"]})
    assert gone.status_code == 204 and not await Budget.objects.aexists()


async def test_a_panel_s_budget_names_the_panel_by_name(staff, people, document):
    panel = await Panel.objects.acreate(
        name="Deploy gate", owner=people["root"], agents=case_for()["agents"]
    )
    response = await staff.post(
        LIST, {"panel": "Deploy gate", "period": "day", "limit_tokens": 10}, JSON
    )
    made = check(document, LIST, "post", response)
    assert (made["panel"], made["panel_name"]) == (panel.pk, "Deploy gate")


async def test_only_staff_change_budgets_and_another_team_s_is_not_found(
    staff, member, people, document
):
    refused = await member.post(
        LIST, {"team": "Payments", "period": "day", "limit_tokens": 1}, JSON
    )
    assert refused.status_code == 403
    check(document, LIST, "post", refused)
    made = (
        await staff.post(LIST, {"team": "Payments", "period": "day", "limit_tokens": 9}, JSON)
    ).json()
    assert (
        await member.put(
            url(made["id"]),
            {"team": "Payments", "period": "day", "limit_tokens": 10**6},
            JSON,
            headers={"If-Match": "*"},
        )
    ).status_code == 403
    eve = await sync_to_async(client_of)(people["eve"])
    assert (await eve.get(url(made["id"]))).status_code == 404
    assert (await eve.delete(url(made["id"]), headers={"If-Match": "*"})).status_code == 404
    assert (await Budget.objects.aget(pk=made["id"])).limit_tokens == 9


async def test_each_refusal_names_its_field_and_stores_nothing(staff, team, document):
    cases = {
        "two scopes": (day(team="Payments", user="ana", limit_tokens=1), 422, {"scope"}),
        "no scope": (day(limit_tokens=1), 422, {"scope"}),
        "two limits": (day(team="Payments", limit_tokens=1, limit_usd=1), 422, {"limit"}),
        "unknown team": (day(team="Nope", limit_tokens=1), 422, {"team"}),
        "unknown user": (day(user="nobody", limit_tokens=1), 422, {"user"}),
        "unknown panel": (day(panel=999, limit_tokens=1), 422, {"panel"}),
        "five decimals": (day(team="Payments", limit_usd=0.00001), 422, {"limit_usd"}),
        "unknown unit": (day(team="Payments", limit_eur=1), 400, {"limit_eur"}),
        "unknown period": (day(team="Payments", limit_tokens=1, period="week"), 400, {"period"}),
    }  # fmt: skip
    for case, (sent, status, fields) in cases.items():
        response = await staff.post(LIST, sent, JSON)
        assert response.status_code == status, (case, response.json())
        assert set(check(document, LIST, "post", response)["errors"]) == fields, case
    assert not await Budget.objects.aexists()


async def test_two_teams_each_have_a_deploy_gate_and_a_budget_finds_its_own(staff, team, document):
    """Issue 49: one staff apply gives two teams each a panel "Deploy gate"; a budget
    naming the panel by name, with its team, lands on that team's panel, not the other's."""
    await Team.objects.acreate(name="Search")
    made = {}
    for name in ("Payments", "Search"):
        sent = {"name": "Deploy gate", "agents": case_for()["agents"], "team": name}
        response = await staff.post("/api/panels/", sent, JSON)
        assert response.status_code == 201, response.json()
        made[name] = response.json()["id"]
    for name in ("Payments", "Search"):
        sent = day(panel="deploy  GATE", panel_team=name, limit_tokens=1000)
        response = await staff.post(LIST, sent, JSON)
        answer = check(document, LIST, "post", response)
        assert response.status_code == 201 and answer["panel"] == made[name]
    # A third in one of the teams is refused, as names compare.
    sent = {"name": "DEPLOY gate", "agents": case_for()["agents"], "team": "Search"}
    refused = await staff.post("/api/panels/", sent, JSON)
    assert refused.status_code == 422 and list(refused.json()["errors"]) == ["name"]
    # A team without that panel says so, naming the field.
    await Team.objects.acreate(name="Empty")
    missing = await staff.post(
        LIST, day(panel="Deploy gate", panel_team="Empty", limit_tokens=1), JSON
    )
    assert missing.status_code == 422 and list(missing.json()["errors"]) == ["panel"]
