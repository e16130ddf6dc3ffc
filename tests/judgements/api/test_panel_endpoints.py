"""Saved panels as configuration over the HTTP API (judgements/api/kinds.py's Panels):
created, read, replaced and deleted with ETags, refused with 412 when stale, 422 naming
the field, 404 for another team's, and the certificates a change voids said in the
answer. Every answer is checked against /api/schema.json."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model

from judgements.configuration import teams
from judgements.core import etags
from judgements.llm import providers
from judgements.models import AuditEntry, AuditSubject, Certificate, Panel, Team
from tests.support.api_client import TokenClient, token_client
from tests.support.cases import case_for
from tests.support.openapi import check

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fake_llm")]

LIST, ONE = "/api/panels/", "/api/panels/{panel_id}/"
JSON = "application/json"


@pytest.fixture
def people(db):
    users = get_user_model().objects
    return {name: users.create_user(name, password="pw") for name in ("ana", "bob", "bot", "eve")}


@pytest.fixture
def team(people):
    team = Team.objects.create(name="Payments")
    teams.set_members(team, [people["ana"], people["bob"], people["bot"]], None)
    return team


@pytest.fixture
def bot(people, team) -> TokenClient:
    """The team's service token: a bot user in the team, its token the team's."""
    return token_client(people["bot"], team)


def body(name: str = "Deploy gate", **fields) -> dict:
    return {"name": name, "agents": case_for()["agents"]} | fields


def url(panel_id: int) -> str:
    return ONE.replace("{panel_id}", str(panel_id))


async def test_a_team_token_creates_a_panel_of_its_team_and_reads_it_back(bot, document):
    sent = body(reviewers=["ana"], four_eyes=True, run_checks=False, notify_contested=True)
    response = await bot.post(LIST, sent, JSON)
    made = check(document, LIST, "post", response)
    assert response.status_code == 201 and response["Location"] == url(made["id"])
    assert response["ETag"] == made["etag"] and made["version"] == 1
    assert made["owner"] == "bot" and made["team"] == "Payments"
    assert (made["reviewers"], made["four_eyes"], made["team_reviews"]) == (["ana"], True, False)
    assert (made["run_checks"], made["notify_contested"], made["hold_contested"]) == (
        False,
        True,
        None,
    )
    assert made["voided_certificates"] == [] and made["certificates"] == []
    read = await bot.get(url(made["id"]))
    assert read["ETag"] == made["etag"]
    assert check(document, ONE, "get", read) == {
        k: v for k, v in made.items() if k != "voided_certificates"
    }
    entry = (
        await AuditEntry.objects.filter(subject=AuditSubject.PANEL).select_related("by").afirst()
    )
    assert entry is not None and entry.by is not None and entry.by.username == "bot"
    assert entry.before is None and entry.after is not None
    assert entry.after["agents"] == case_for()["agents"]


async def test_a_change_needs_the_current_etag_and_a_stale_one_gets_412(bot, document):
    made = (await bot.post(LIST, body(), JSON)).json()
    changed = await bot.put(
        url(made["id"]), body(description="v2"), JSON, headers={"If-Match": made["etag"]}
    )
    now = check(document, ONE, "put", changed)
    assert changed.status_code == 200 and now["version"] == 2 and now["etag"] != made["etag"]
    stale = await bot.put(
        url(made["id"]), body(description="v3"), JSON, headers={"If-Match": made["etag"]}
    )
    refused = check(document, ONE, "put", stale)
    assert stale.status_code == 412 and refused["etag"] == now["etag"] == stale["ETag"]
    assert (await Panel.objects.aget(pk=made["id"])).description == "v2"
    missing = await bot.put(url(made["id"]), body(description="v3"), JSON)
    assert missing.status_code == 400
    assert check(document, ONE, "put", missing)["errors"] == {"If-Match": [etags.REQUIRED]}


async def test_two_concurrent_changes_with_one_etag_one_wins_and_one_gets_412(bot, people):
    made = (await bot.post(LIST, body(), JSON)).json()
    other = await sync_to_async(token_client)(people["ana"])
    answers = await asyncio.gather(
        bot.put(
            url(made["id"]), body(description="bot's"), JSON, headers={"If-Match": made["etag"]}
        ),
        other.put(
            url(made["id"]), body(description="ana's"), JSON, headers={"If-Match": made["etag"]}
        ),
    )
    assert sorted(a.status_code for a in answers) == [200, 412]
    winner = next(a for a in answers if a.status_code == 200).json()
    assert (await Panel.objects.aget(pk=made["id"])).description == winner["description"]
    assert winner["version"] == 2


async def test_changing_a_criterion_voids_the_certificate_and_says_so(bot, document):
    made = (await bot.post(LIST, body(), JSON)).json()
    certificate = await Certificate.objects.acreate(
        panel_id=made["id"], agents=made["agents"], fingerprint="measured",
        target=0.9, delta=0.1, samples=10, certified=True,
    )  # fmt: skip
    read = (await bot.get(url(made["id"]))).json()
    assert read["certificates"] == [certificate.pk]
    agents = [dict(made["agents"][0], criteria="Approve nothing."), *made["agents"][1:]]
    changed = await bot.put(
        url(made["id"]), body(agents=agents), JSON, headers={"If-Match": read["etag"]}
    )
    now = check(document, ONE, "put", changed)
    assert now["voided_certificates"] == [certificate.pk] and now["certificates"] == []
    await certificate.arefresh_from_db()
    assert certificate.voided_at is not None


async def test_a_description_change_voids_nothing(bot):
    made = (await bot.post(LIST, body(), JSON)).json()
    measured = await sync_to_async(fingerprint)(made)
    await Certificate.objects.acreate(
        panel_id=made["id"], agents=made["agents"], fingerprint=measured,
        target=0.9, delta=0.1, samples=10, certified=True,
    )  # fmt: skip
    read = (await bot.get(url(made["id"]))).json()
    changed = await bot.put(
        url(made["id"]), body(description="Only words."), JSON, headers={"If-Match": read["etag"]}
    )
    assert changed.json()["voided_certificates"] == []


def fingerprint(made: dict) -> str:
    from judgements.core import prompt_variants
    from judgements.models import agents_fingerprint

    # A panel that names no variants runs the site's default.
    return agents_fingerprint(made["agents"], prompt_variants.DEFAULT)


async def test_each_refusal_names_its_field_and_stores_nothing(bot, document):
    two_agents = body(agents=case_for()["agents"][:2])
    unknown_model = [dict(case_for()["agents"][0], model="nope"), *case_for()["agents"][1:]]
    cases = {
        "outsider reviewer": (body(reviewers=["eve"]), 422, {"reviewers"}),
        "unknown reviewer": (body(reviewers=["nobody"]), 422, {"reviewers"}),
        "another team": (body(team="Elsewhere"), 422, {"team"}),
        "two agents": (two_agents, 400, {"agents"}),
        "unknown field": (body(colour="red"), 400, {"colour"}),
        "wrong type": (body(four_eyes="yes"), 400, {"four_eyes"}),
        "unknown model": (body(agents=unknown_model), 400, {"agents[0].model"}),
    }  # fmt: skip
    for case, (sent, status, fields) in cases.items():
        response = await bot.post(LIST, sent, JSON)
        assert response.status_code == status, (case, response.json())
        assert set(check(document, LIST, "post", response)["errors"]) == fields, case
    assert await Panel.objects.acount() == 0


async def test_the_prompt_variants_are_a_setting_kept_as_sent(bot, document):
    made = check(document, LIST, "post", await bot.post(LIST, body(), JSON))
    assert made["prompt_variants"] is None  # not set: the site's default
    sent = body(prompt_variants=["quote", "decision_first"])
    changed = await bot.put(url(made["id"]), sent, JSON, headers={"If-Match": made["etag"]})
    now = check(document, ONE, "put", changed)
    assert now["prompt_variants"] == ["quote", "decision_first"]
    stored = await Panel.objects.aget(pk=made["id"])
    assert stored.prompt_variants == ["quote", "decision_first"]
    # Left out, it takes its default, as every setting of a PUT does.
    again = await bot.put(url(made["id"]), body(), JSON, headers={"If-Match": now["etag"]})
    assert check(document, ONE, "put", again)["prompt_variants"] is None
    empty = await bot.put(
        url(made["id"]), body(prompt_variants=[]), JSON, headers={"If-Match": again["ETag"]}
    )
    assert check(document, ONE, "put", empty)["prompt_variants"] == []


async def test_bad_prompt_variants_are_refused_naming_the_field(bot, document):
    cases = {
        "unknown": (["reason_last"], 422, "Unknown prompt variant 'reason_last' (known: "),
        "clash": (["named_peers", "decisions_only"], 422, "both say how to show earlier"),
        "round 1 twice": (["plain_question", "user_words"], 422, "both say how to ask round 1"),
        "twice": (["quote", "quote"], 422, "named twice"),
        "not a list": ("quote", 400, ""),
    }
    for case, (variants, status, words) in cases.items():
        response = await bot.post(LIST, body(prompt_variants=variants), JSON)
        assert response.status_code == status, (case, response.json())
        errors = check(document, LIST, "post", response)["errors"]
        assert set(errors) == {"prompt_variants"}, case
        assert words in " ".join(errors["prompt_variants"]), case
    assert await Panel.objects.acount() == 0


async def test_changing_the_prompt_variants_voids_the_certificate(bot, document):
    made = (await bot.post(LIST, body(), JSON)).json()
    measured = await sync_to_async(fingerprint)(made)
    certificate = await Certificate.objects.acreate(
        panel_id=made["id"], agents=made["agents"], fingerprint=measured,
        target=0.9, delta=0.1, samples=10, certified=True,
    )  # fmt: skip
    read = (await bot.get(url(made["id"]))).json()
    changed = await bot.put(
        url(made["id"]),
        body(prompt_variants=["decisions_only"]),
        JSON,
        headers={"If-Match": read["etag"]},
    )
    assert check(document, ONE, "put", changed)["voided_certificates"] == [certificate.pk]


async def test_a_team_s_panels_have_distinct_names(bot, people, team):
    await bot.post(LIST, body(), JSON)
    # Another member owns a panel of the same name, given to the same team.
    again = await (await sync_to_async(token_client)(people["ana"])).post(
        LIST, body("DEPLOY gate", team="Payments"), JSON
    )
    assert again.status_code == 422
    # One rule of a team's panel names (the panel form's), said once.
    assert again.json()["errors"] == {
        "name": ["The team Payments already has a panel called 'DEPLOY gate'."]
    }


async def test_another_team_s_panel_is_not_found_and_an_example_is_forbidden(
    bot, people, document, example_panels
):
    made = (await bot.post(LIST, body(), JSON)).json()
    eve = await sync_to_async(token_client)(people["eve"])
    for response in (
        await eve.get(url(made["id"])),
        await eve.put(url(made["id"]), body(), JSON, headers={"If-Match": "*"}),
        await eve.delete(url(made["id"]), headers={"If-Match": "*"}),
    ):
        assert response.status_code == 404, response.json()
    example = next(iter(example_panels.values()))
    refused = await eve.put(url(example.pk), body(), JSON, headers={"If-Match": "*"})
    assert refused.status_code == 403
    check(document, ONE, "put", refused)


async def test_a_dry_run_answers_as_the_change_would_and_stores_nothing(bot):
    made = await bot.post(LIST + "?dry_run=true", body(), JSON)
    assert made.status_code == 201 and made.json()["name"] == "Deploy gate"
    assert await Panel.objects.acount() == 0
    assert not await AuditEntry.objects.filter(subject=AuditSubject.PANEL).aexists()


async def test_a_panel_is_deleted_with_its_etag(bot, document):
    made = (await bot.post(LIST, body(), JSON)).json()
    stale = await bot.delete(url(made["id"]), headers={"If-Match": '"panel-1-0-00000000"'})
    assert stale.status_code == 412
    gone = await bot.delete(url(made["id"]), headers={"If-Match": made["etag"]})
    assert gone.status_code == 204 and not await Panel.objects.aexists()
    entry = await AuditEntry.objects.filter(subject=AuditSubject.PANEL).afirst()
    assert entry is not None and entry.after is None and entry.before is not None
    assert entry.before["name"] == "Deploy gate"


async def test_staff_make_an_example_panel_and_it_stays_one(bot, people, document):
    await get_user_model().objects.filter(username="ana").aupdate(is_staff=True)
    staff = await sync_to_async(token_client)(await get_user_model().objects.aget(username="ana"))
    refused = await bot.post(LIST, body(example=True), JSON)
    assert refused.status_code == 403
    response = await staff.post(LIST, body("Shared gate", example=True), JSON)
    made = check(document, LIST, "post", response)
    assert (made["example"], made["owner"], made["team"]) == (True, None, None)
    owned = await staff.put(url(made["id"]), body("Shared gate"), JSON, headers={"If-Match": "*"})
    assert owned.status_code == 422 and set(owned.json()["errors"]) == {"example"}
    kept = await staff.put(url(made["id"]), body("Shared gate", example=True, description="v2"),
                           JSON, headers={"If-Match": made["etag"]})  # fmt: skip
    assert kept.status_code == 200 and kept.json()["description"] == "v2"
    in_a_team = await staff.post(LIST, body("Other", example=True, team="Payments"), JSON)
    assert in_a_team.status_code == 422 and set(in_a_team.json()["errors"]) == {"team"}


async def test_the_models_an_agent_may_name_are_listed(bot, document, settings):
    """The published panel schema points at GET /api/models/ (issue 49): it lists what
    the deployment can reach, the names a panel's agents are checked against."""
    answer = check(document, "/api/models/", "get", await bot.get("/api/models/"))
    assert answer["models"] == await sync_to_async(providers.available_models)()
    assert {"model-a", "model-b", "model-c"} <= set(answer["models"])
    refused = await TokenClient("Bearer nope").get("/api/models/")
    assert refused.status_code == 401
