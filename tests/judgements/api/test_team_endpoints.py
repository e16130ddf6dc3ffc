"""Teams and people over the HTTP API (judgements/api/kinds.py's Teams, Users and Tokens):
staff make teams, users and tokens; a team's members change its members with its ETag;
another team is not found. Every answer is checked against /api/schema.json."""

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model

from judgements.configuration import teams
from judgements.models import ApiToken, AuditEntry, AuditSubject, Panel, Team
from tests.support.api_client import TokenClient
from tests.support.cases import case_for
from tests.support.openapi import check

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fake_llm")]

TEAMS, TEAM = "/api/teams/", "/api/teams/{team_id}/"
USERS, TOKENS = "/api/users/", "/api/tokens/"
JSON = "application/json"


@pytest.fixture
def people(db):
    users = get_user_model().objects
    people = {
        name: users.create_user(name, password="pw") for name in ("root", "ana", "bob", "eve")
    }
    users.filter(username="root").update(is_staff=True)
    people["root"].refresh_from_db()
    return people


@pytest.fixture
def team(people):
    team = Team.objects.create(name="Payments")
    teams.set_members(team, [people["ana"], people["bob"]], None)
    return team


def client_of(user) -> TokenClient:
    return TokenClient(f"Bearer {ApiToken.issue(user, 'config')[1]}")


@pytest.fixture
def staff(people) -> TokenClient:
    return client_of(people["root"])


@pytest.fixture
def ana(people, team) -> TokenClient:
    return client_of(people["ana"])


def url(team_id: int) -> str:
    return TEAM.replace("{team_id}", str(team_id))


async def test_staff_make_a_team_and_a_member_changes_its_members(staff, ana, people, document):
    response = await staff.post(TEAMS, {"name": "Search", "members": ["ana", "eve"]}, JSON)
    made = check(document, TEAMS, "post", response)
    assert response.status_code == 201 and made["members"] == ["ana", "eve"]
    assert response["ETag"] == made["etag"] and made["version"] == 1
    changed = await ana.put(
        url(made["id"]),
        {"name": "Search", "members": ["ana", "bob"]},
        JSON,
        headers={"If-Match": made["etag"]},
    )
    now = check(document, TEAM, "put", changed)
    assert (now["members"], now["version"]) == (["ana", "bob"], 2)
    entry = (
        await AuditEntry.objects.filter(subject=AuditSubject.MEMBERSHIP)
        .select_related("by")
        .afirst()
    )
    assert entry is not None and entry.by is not None and entry.by.username == "ana"
    assert (entry.before, entry.after) == (["ana", "eve"], ["ana", "bob"])
    listed = check(document, TEAMS, "get", await ana.get(TEAMS))["teams"]
    assert [t["name"] for t in listed] == ["Payments", "Search"]


async def test_a_stale_etag_gets_412_and_changes_no_member(ana, team, document):
    read = await ana.get(url(team.pk))
    etag = check(document, TEAM, "get", read)["etag"]
    assert read["ETag"] == etag
    first = await ana.put(
        url(team.pk), {"name": "Payments", "members": ["ana"]}, JSON, headers={"If-Match": etag}
    )
    assert first.status_code == 200
    second = await ana.put(
        url(team.pk),
        {"name": "Payments", "members": ["ana", "bob", "eve"]},
        JSON,
        headers={"If-Match": etag},
    )
    assert (
        second.status_code == 412 and check(document, TEAM, "put", second)["etag"] == first["ETag"]
    )
    assert await sync_to_async(teams.member_names)(team) == ["ana"]


async def test_a_member_may_not_rename_the_team_nor_leave_it_and_another_team_is_not_found(
    ana, team, people, document
):
    renamed = await ana.put(
        url(team.pk), {"name": "Mine", "members": ["ana", "bob"]}, JSON, headers={"If-Match": "*"}
    )
    assert renamed.status_code == 403
    check(document, TEAM, "put", renamed)
    leaving = await ana.put(
        url(team.pk), {"name": "Payments", "members": ["bob"]}, JSON, headers={"If-Match": "*"}
    )
    assert leaving.status_code == 422 and set(check(document, TEAM, "put", leaving)["errors"]) == {
        "members"
    }
    unknown = await ana.put(
        url(team.pk),
        {"name": "Payments", "members": ["ana", "nobody"]},
        JSON,
        headers={"If-Match": "*"},
    )
    assert unknown.status_code == 422 and set(unknown.json()["errors"]) == {"members"}
    eve = await sync_to_async(client_of)(people["eve"])
    for response in (
        await eve.get(url(team.pk)),
        await eve.put(
            url(team.pk), {"name": "Payments", "members": ["eve"]}, JSON, headers={"If-Match": "*"}
        ),
        await eve.delete(url(team.pk), headers={"If-Match": "*"}),
    ):
        assert response.status_code == 404
    assert (await ana.post(TEAMS, {"name": "Mine"}, JSON)).status_code == 403
    assert (await ana.delete(url(team.pk), headers={"If-Match": "*"})).status_code == 403
    assert await sync_to_async(teams.member_names)(team) == ["ana", "bob"]


async def test_a_reviewer_taken_out_of_the_team_stops_reviewing(ana, team, people):
    panel = await Panel.objects.acreate(
        name="Gate", owner=people["ana"], team=team, agents=case_for()["agents"]
    )
    await sync_to_async(teams.set_reviewing)(panel, None, reviewers=[people["bob"]])
    await ana.put(
        url(team.pk), {"name": "Payments", "members": ["ana"]}, JSON, headers={"If-Match": "*"}
    )
    assert not await sync_to_async(panel.reviewed_by)(people["bob"])


async def test_staff_delete_a_team_with_its_etag(staff, team, document):
    etag = (await staff.get(url(team.pk))).json()["etag"]
    gone = await staff.delete(url(team.pk), headers={"If-Match": etag})
    assert gone.status_code == 204 and not await Team.objects.aexists()
    entry = await AuditEntry.objects.filter(subject=AuditSubject.TEAM).afirst()
    assert entry is not None and entry.after is None


async def test_staff_make_a_user_with_an_email_and_a_team_token_for_them(staff, team, document):
    response = await staff.post(USERS, {"username": "deploy-bot", "email": "bot@example.com"}, JSON)
    made = check(document, USERS, "post", response)
    assert response.status_code == 201
    assert (made["username"], made["email"], made["is_staff"], made["teams"]) == (
        "deploy-bot",
        "bot@example.com",
        False,
        [],
    )
    issued = await staff.post(
        TOKENS, {"user": "deploy-bot", "name": "deploy", "team": "Payments"}, JSON
    )
    token = check(document, TOKENS, "post", issued)
    assert issued.status_code == 201 and token["team"] == "Payments"
    stored = await ApiToken.objects.select_related("team").aget(pk=token["id"])
    assert stored.team is not None and stored.team.name == "Payments"
    assert ApiToken.hash(token["key"]) == stored.key_hash
    # The bot's token works: it reads what it may, and no more (it is in no team).
    bot = TokenClient(f"Bearer {token['key']}")
    assert check(document, TEAMS, "get", await bot.get(TEAMS))["teams"] == []
    listed = check(document, USERS, "get", await staff.get(USERS))["users"]
    assert "deploy-bot" in [u["username"] for u in listed]


async def test_only_staff_make_users_and_tokens_and_refusals_name_the_field(staff, ana, document):
    for path, sent in (
        (USERS, {"username": "x", "email": "x@example.com"}),
        (TOKENS, {"user": "ana"}),
    ):
        refused = await ana.post(path, sent, JSON)
        assert refused.status_code == 403
        check(document, path, "post", refused)
    assert (await ana.get(USERS)).status_code == 403
    cases = {
        (USERS, "taken"): ({"username": "ana", "email": "a@example.com"}, {"username"}),
        (USERS, "bad email"): ({"username": "zed", "email": "not an address"}, {"email"}),
        (TOKENS, "unknown user"): ({"user": "nobody"}, {"user"}),
        (TOKENS, "unknown team"): ({"user": "ana", "team": "Nope"}, {"team"}),
    }
    for (path, case), (sent, fields) in cases.items():
        response = await staff.post(path, sent, JSON)
        assert response.status_code == 422, case
        assert set(check(document, path, "post", response)["errors"]) == fields, case
    assert not await get_user_model().objects.filter(username="zed").aexists()


async def test_a_dry_run_makes_no_user_and_issues_no_token(staff, people, document):
    """docs/api.md: a dry run answers as the change would and keeps nothing (issue 49)."""
    made = await staff.post(
        USERS + "?dry_run=true", {"username": "ghost", "email": "g@example.com"}, JSON
    )
    assert made.status_code == 201
    assert check(document, USERS, "post", made)["username"] == "ghost"
    assert not await get_user_model().objects.filter(username="ghost").aexists()
    tokens_before = await ApiToken.objects.acount()
    audited_before = await AuditEntry.objects.acount()
    issued = await staff.post(TOKENS + "?dry_run=true", {"user": "ana", "name": "dry"}, JSON)
    assert issued.status_code == 201
    answer = check(document, TOKENS, "post", issued)
    assert answer["user"] == "ana" and answer["key"] == ""
    assert await ApiToken.objects.acount() == tokens_before
    assert await AuditEntry.objects.acount() == audited_before
    # What a dry run refuses, it refuses as the change would.
    refused = await staff.post(
        USERS + "?dry_run=true", {"username": "ana", "email": "a@x.io"}, JSON
    )
    assert refused.status_code == 422
