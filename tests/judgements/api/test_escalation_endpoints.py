"""Escalation over the HTTP API (docs/escalation.md): a panel names the panel it escalates
to, refused with 422 naming `escalate_to` for a panel its team may not use, itself or a
cycle; a verdict the first level contests is decided by the second, one both contest
waits for a person, and budgets count every level. Every answer is checked against
/api/schema.json."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.db.models import Sum

from judgements.configuration import teams
from judgements.models import Budget, Judgement, LLMAttempt, Team, WebhookDelivery
from judgements.models.judgements import waiting_for_review
from judgements.spending import budgets
from tests.support.api_client import TokenClient, serve_one_wake_up, token_client
from tests.support.cases import case_for
from tests.support.openapi import check

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("empty_engine_channel"),
]

PANELS, JUDGEMENTS, JSON = "/api/panels/", "/api/judgements/", "application/json"
STRONG = ("strong-a", "strong-b", "strong-c")


@pytest.fixture
def served(fake_llm):
    for model in STRONG:
        fake_llm.script(model)
    return fake_llm


@pytest.fixture
def people(db):
    users = get_user_model().objects
    return {name: users.create_user(name, password="pw") for name in ("ana", "bot", "eve")}


@pytest.fixture
def team(people):
    team = Team.objects.create(name="Payments")
    teams.set_members(team, [people["ana"], people["bot"]], None)
    return team


@pytest.fixture
def bot(people, team) -> TokenClient:
    return token_client(people["bot"], team)


@pytest.fixture
def ana(people) -> TokenClient:
    return token_client(people["ana"])


@pytest.fixture
def eve(people) -> TokenClient:
    return token_client(people["eve"])


def panel(name: str, models=("model-a", "model-b", "model-c"), **fields) -> dict:
    return {"name": name, "agents": case_for(models)["agents"]} | fields


async def cascade(bot: TokenClient, document: dict, **strong) -> tuple[dict, dict]:
    made = await bot.post(PANELS, panel("Strong", STRONG, **strong), JSON)
    strong_panel = check(document, PANELS, "post", made)
    made = await bot.post(PANELS, panel("Cheap", escalate_to="Strong"), JSON)
    cheap = check(document, PANELS, "post", made)
    assert made.status_code == 201 and cheap["escalate_to"] == "Strong"
    return cheap, strong_panel


def cheap_case() -> dict:
    case = case_for()
    del case["agents"]
    return case | {"panel": "Cheap"}


async def judged(bot: TokenClient, levels: int) -> dict:
    """Submit a case to the Cheap panel and run each level's wake-up as a worker would."""
    response = await bot.post(JUDGEMENTS, cheap_case(), JSON)
    assert response.status_code == 201, response.json()
    for _ in range(levels):
        assert await asyncio.wait_for(serve_one_wake_up(), 30)
    return (await bot.get(f"{JUDGEMENTS}{response.json()['id']}/")).json()


async def test_a_verdict_the_first_panel_contests_is_decided_by_the_second(served, bot, document):
    await cascade(bot, document)
    served.script("model-c", votes="RRR")  # a 2-1 split: contested at level 1
    story = await judged(bot, levels=2)
    assert story["status"] == "approved"
    escalation = story["escalation"]
    assert (escalation["level"], escalation["decided_by"], escalation["in_force"]) == (1, 2, 2)
    first, second = escalation["levels"]
    assert (first["escalated"], first["trust"], first["in_force"]) == (True, "contested", False)
    assert [a["model"] for a in first["agents"]] == ["model-a", "model-b", "model-c"]
    # The top is level 2's, as its status is: its panel, agents, mark and receipt, not
    # level 1's "Contested" (a pipeline reads one truth; each level's own is beside it).
    assert story["panel"]["name"] == "Strong" and story["panel_status"] == "approved"
    assert [a["model"] for a in story["agents"]] == list(STRONG)
    assert (story["trust"], story["contested"]) == (second["trust"], False)
    assert story["trust"] != "contested" and story["contest_reasons"] == []
    assert story["trust_words"] == second["trust_words"] != "Contested"
    assert story["receipt"] == second["receipt"] and story["receipt"] != first["receipt"]
    signed = story["receipt"]["receipt"]
    assert (signed["judgement"], signed["verdict"]) == (second["judgement"], "approved")
    assert first["receipt"]["receipt"]["judgement"] == story["id"]
    assert (second["panel"]["name"], second["panel_status"], second["escalated"]) == (
        "Strong",
        "approved",
        False,
    )
    assert second["judgement"] != story["id"]
    level_two = (await bot.get(f"{JUDGEMENTS}{second['judgement']}/")).json()
    assert level_two["escalation"]["root"] == story["id"]
    assert [a["model"] for a in level_two["agents"]] == list(STRONG)
    # The review queue has nothing: the second level kept its verdict.
    assert not await Judgement.objects.filter(waiting_for_review()).aexists()


async def test_a_case_both_panels_contest_waits_for_a_person(served, bot, document, ana):
    await cascade(bot, document, hold_contested=True, reviewers=["ana"])
    served.script("model-c", votes="RRR")
    served.script("strong-c", votes="RRR")
    story = await judged(bot, levels=2)
    # Held at the last level: the story ends there, for a person.
    assert (story["status"], story["escalation"]["decided_by"]) == ("held", 2)
    queue = (await ana.get("/api/reviews/")).json()["judgements"]
    # The story waits once, at its last level, for that panel's reviewers.
    assert [j["id"] for j in queue] == [story["escalation"]["levels"][1]["judgement"]]


async def test_the_201_of_a_panel_that_escalates_carries_its_story(served, bot, document):
    await cascade(bot, document)
    response = await bot.post(JUDGEMENTS, cheap_case(), JSON)
    started = check(document, JUDGEMENTS, "post", response)
    assert response.status_code == 201 and started["escalation"] is not None
    assert (started["escalation"]["in_force"], started["escalation"]["decided_by"]) == (1, None)
    assert [level["panel"]["name"] for level in started["escalation"]["levels"]] == ["Cheap"]


async def test_a_story_is_never_approved_while_its_next_level_runs(served, bot, document):
    await cascade(bot, document)
    served.script("model-c", votes="RRR")
    story = await judged(bot, levels=1)
    assert story["status"] == "idle" and story["escalation"]["decided_by"] is None
    # The top is the level in force, still queued: no approval and no receipt there.
    assert (story["panel_status"], story["receipt"], story["trust"]) == ("idle", None, None)
    assert story["escalation"]["levels"][0]["panel_status"] == "approved"


async def test_a_verdict_the_first_panel_keeps_does_not_escalate(served, bot, document):
    await cascade(bot, document)
    story = await judged(bot, levels=1)
    assert story["status"] == "approved" and story["escalation"]["decided_by"] == 1
    assert [level["in_force"] for level in story["escalation"]["levels"]] == [True]
    assert story["receipt"]["receipt"]["judgement"] == story["id"]
    assert await Judgement.objects.acount() == 1


async def test_an_escalation_to_a_panel_the_team_may_not_use_is_refused(served, bot, document, eve):
    made = await eve.post(PANELS, panel("Eve's", STRONG), JSON)
    eves = check(document, PANELS, "post", made)
    for target in (eves["id"], "Eve's"):
        response = await bot.post(PANELS, panel("Cheap", escalate_to=target), JSON)
        refused = check(document, PANELS, "post", response)
        assert response.status_code == 422
        assert list(refused["errors"]) == ["escalate_to"]
    response = await bot.post(PANELS, panel("Cheap", escalate_to="Nowhere"), JSON)
    assert response.status_code == 422 and "Nowhere" in response.json()["errors"]["escalate_to"][0]


async def test_a_panel_cannot_escalate_to_itself_nor_in_a_cycle(served, bot, document):
    cheap, strong = await cascade(bot, document)
    headers = {"If-Match": strong["etag"]}
    response = await bot.put(
        f"{PANELS}{strong['id']}/",
        panel("Strong", STRONG, escalate_to="Cheap"),
        JSON,
        headers=headers,
    )
    assert response.status_code == 422
    assert "comes back" in response.json()["errors"]["escalate_to"][0]
    response = await bot.put(
        f"{PANELS}{cheap['id']}/", panel("Cheap", escalate_to="Cheap"), JSON,
        headers={"If-Match": cheap["etag"]},
    )  # fmt: skip
    assert response.status_code == 422 and "itself" in response.json()["errors"]["escalate_to"][0]
    # A panel another escalates to is not deleted from under it.
    response = await bot.delete(f"{PANELS}{strong['id']}/", headers=headers)
    assert response.status_code == 422 and "Cheap" in response.json()["errors"]["escalate_to"][0]


async def test_moving_a_level_another_panel_escalates_to_is_refused_naming_team(
    served, bot, document, people
):
    """Issue 70: moving a later level to another team silently broke the chain (the level
    before it stopped escalating). Refused, naming the panel to change first."""
    _, strong = await cascade(bot, document)
    elsewhere = await Team.objects.acreate(name="Elsewhere")
    await sync_to_async(teams.set_members)(elsewhere, [people["bot"]], None)
    response = await bot.put(
        f"{PANELS}{strong['id']}/",
        panel("Strong", STRONG, team="Elsewhere"),
        JSON,
        headers={"If-Match": strong["etag"]},
    )
    refused = check(document, "/api/panels/{panel_id}/", "put", response)
    assert response.status_code == 422 and list(refused["errors"]) == ["team"]
    assert refused["errors"]["team"][0].startswith("The panel 'Cheap' escalates to it: ")
    assert "Change 'Cheap''s escalation first." in refused["errors"]["team"][0]
    moved = await bot.get(f"{PANELS}{strong['id']}/")
    assert moved.json()["team"] == "Payments"


async def test_budgets_count_every_level(served, bot, document, team, settings):
    await cascade(bot, document)
    settings.MAGI_LLM_MAX_TOKENS = 100
    # One level's estimate is 900 tokens; the story's two levels need 1,800.
    budget = await Budget.objects.acreate(team=team, period="day", limit_tokens=1_500)
    response = await bot.post(JUDGEMENTS, cheap_case(), JSON)
    assert response.status_code == 402 and response.json()["budget"] == budget.pk
    # The refusal says the estimate is the whole chain's, not one level's.
    assert "as if each of the 2 levels of its escalation chain ran" in str(response.json())
    budget.limit_tokens = 100_000
    await budget.asave()
    served.script("model-c", votes="RRR")
    story = await judged(bot, levels=2)
    spent = (await sync_to_async(budgets.spent)(budget)).tokens
    levels = [level["judgement"] for level in story["escalation"]["levels"]]
    each = [await sync_to_async(tokens_of)(pk) for pk in levels]
    assert len(each) == 2 and all(tokens > 0 for tokens in each) and spent == sum(each)


def tokens_of(judgement_id: int) -> int:
    found = LLMAttempt.objects.filter(agent__judgement_id=judgement_id).aggregate(
        prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens")
    )
    return (found["prompt"] or 0) + (found["completion"] or 0)


async def test_a_story_sends_one_webhook_when_it_ends_carrying_every_level(
    served, api, receiver, secret, document
):
    made = await api.post(PANELS, panel("Strong", STRONG), JSON)
    assert made.status_code == 201
    made = await api.post(PANELS, panel("Cheap", escalate_to="Strong"), JSON)
    assert made.status_code == 201
    served.script("model-c", votes="RRR")
    response = await api.post(JUDGEMENTS, cheap_case() | {"callback_url": receiver.url}, JSON)
    assert response.status_code == 201, response.json()
    assert await asyncio.wait_for(serve_one_wake_up(), 30)
    # The first level escalated: nothing is sent while the story goes on.
    assert not await WebhookDelivery.objects.aexists()
    assert await asyncio.wait_for(serve_one_wake_up(), 30)
    deliveries = [d async for d in WebhookDelivery.objects.all()]
    assert [(d.judgement_id, d.event) for d in deliveries] == [
        (response.json()["id"], "judgement.finished")
    ]
    payload = deliveries[0].payload
    assert payload["status"] == "approved" and payload["escalation"]["decided_by"] == 2
    # The webhook's top is the level in force's, as the API answer's is.
    second = payload["escalation"]["levels"][1]
    assert payload["receipt"] == second["receipt"] and payload["trust"] == second["trust"]
    assert payload["trust"] != "contested" and payload["panel"]["name"] == "Strong"
    assert [level["level"] for level in payload["escalation"]["levels"]] == [1, 2]
