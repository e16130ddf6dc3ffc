"""Saved panels (judgements/configuration/saving.py; naming one is intake/test_saved_panels.py):
saving one, the shipped examples, and a case that names a panel in place of its
agents, from the API and the command line."""

import asyncio
import json

import pytest
import yaml
from asgiref.sync import sync_to_async
from django.core.management import call_command
from django.test import AsyncClient

from judgements.configuration import saving
from judgements.core.errors import InvalidInput
from judgements.llm.local import files as local_files
from judgements.models import Judgement, Panel
from judgements.panels import saved_panels
from tests.support.api_client import TokenClient, serve_one_wake_up
from tests.support.cases import case_for
from tests.support.commands import run_judge
from tests.support.openapi import check

pytestmark = pytest.mark.django_db

SHIPPED = {"travel-expense", "deploy-gate", "comment-moderation"}


def agents(*criteria: str) -> list[dict]:
    return [
        {"name": name, "model": "model-a", "criteria": text}
        for name, text in zip(("Melchior", "Balthasar", "Casper"), criteria, strict=True)
    ]


# The shipped examples.


def test_the_examples_ship_with_the_bundled_model(example_panels):
    assert set(example_panels) >= SHIPPED
    for panel in example_panels.values():
        assert panel.owner is None and panel.description
        assert [a["model"] for a in panel.agents] == [local_files.BUNDLED_MODEL_NAME] * 3
        assert [a["name"] for a in panel.agents] == ["Melchior", "Balthasar", "Casper"]
    travel = yaml.safe_load((saving.EXAMPLES_DIR / "travel-expense.yaml").read_text())
    assert saved_panels.agents_of(example_panels["travel-expense"]) == travel["agents"]


def test_ensuring_the_examples_again_creates_nothing_and_keeps_edits(example_panels):
    count = Panel.objects.count()
    Panel.objects.filter(name="deploy-gate").update(description="Edited by staff")
    saving.ensure_examples()
    assert Panel.objects.count() == count
    assert Panel.objects.get(name="deploy-gate").description == "Edited by staff"


def test_a_deleted_example_comes_back(example_panels):
    Panel.objects.filter(name="deploy-gate").delete()
    call_command("load_examples", verbosity=0)
    assert Panel.objects.filter(owner=None, name="deploy-gate").count() == 1
    assert Panel.objects.filter(owner=None).count() == len(example_panels)


def test_an_invalid_example_file_is_refused_naming_file_and_field(fake_llm, tmp_path):
    fake_llm.script(local_files.BUNDLED_MODEL_NAME)
    spec = {"name": "broken", "description": "", "agents": agents("a", "b", "c")}
    (tmp_path / "panels").mkdir()
    (tmp_path / "panels" / "broken.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(InvalidInput) as refused:
        saving.ensure_examples(tmp_path)
    # model-a is served, but an example must run on the bundled model.
    assert list(refused.value.errors) == [
        "panels/broken.yaml: agents[0].model",
        "panels/broken.yaml: agents[1].model",
        "panels/broken.yaml: agents[2].model",
    ]
    assert not Panel.objects.exists()


# Saving a panel.


def test_it_saves_a_panel_validated_like_a_judgements_agents(fake_llm, user):
    panel = saving.save_panel(
        owner=user, name="Desk", description="Travel", agents=agents("a", "b", "c")
    )
    assert (panel.owner, panel.name, panel.description) == (user, "Desk", "Travel")
    assert saved_panels.agents_of(panel) == agents("a", "b", "c")


@pytest.mark.parametrize(
    ("name", "description", "panel_agents", "fields"),
    [
        ("", "", agents("a", "b", "c"), ["name"]),
        ("\u200b\u200b", "", agents("a", "b", "c"), ["name"]),
        ("x" * 101, "", agents("a", "b", "c"), ["name"]),
        ("Desk", "x" * 1_001, agents("a", "b", "c"), ["description"]),
        (7, None, agents("a", "b", "c"), ["name", "description"]),
        ("Desk", "", agents("a", "b", "c")[:2], ["agents"]),
        ("Desk", "", "three agents", ["agents"]),
        ("Desk", "", agents("a", "b", ""), ["agents[2].criteria"]),
        (
            "Desk",
            "",
            [*agents("a", "b", "c")[:2], {"name": "MELCHIOR", "model": "model-a", "criteria": "c"}],
            ["agents[2].name"],
        ),
        (
            "",
            "",
            [{"name": "A", "model": "gpt-nope", "criteria": "c"}, *agents("a", "b", "c")[1:]],
            ["name", "agents[0].model"],
        ),
        ("Desk", "", [{"name": "A", "model": "model-a", "criteria": "c", "x": 1}] * 3, None),
    ],
)
def test_it_names_every_invalid_field(fake_llm, user, name, description, panel_agents, fields):
    with pytest.raises(InvalidInput) as refused:
        saving.save_panel(owner=user, name=name, description=description, agents=panel_agents)
    if fields is None:  # an unknown agent field, named with its path
        assert "agents[0].x" in refused.value.errors
    else:
        assert sorted(refused.value.errors) == sorted(fields)
    assert not Panel.objects.exists()


def test_names_are_unique_per_owner(make_panel, user, other_user):
    make_panel("Desk", owner=user)
    with pytest.raises(InvalidInput) as refused:
        make_panel("DESK ", owner=user)
    assert list(refused.value.errors) == ["name"]
    assert make_panel("Desk", owner=other_user).owner == other_user
    assert make_panel("Desk", owner=None).owner is None


# The HTTP API.


async def post(api, case) -> tuple[int, dict]:
    response = await api.post(
        "/api/judgements/?wait=30", json.dumps(case), content_type="application/json"
    )
    return response.status_code, response.json()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("empty_engine_channel")
async def test_the_api_judges_with_an_example_panel_by_name(example_panels, api, fake_llm):
    fake_llm.script(local_files.BUNDLED_MODEL_NAME, votes="RRR")
    case = {"title": "Deploy", "content": "Friday deploy, no tests.", "panel": "deploy-gate"}
    worker = asyncio.create_task(serve_one_wake_up())
    status, body = await post(api, case)
    assert await worker
    assert status == 201
    assert body["status"] == "rejected"
    judgement = await Judgement.objects.select_related("panel").aget(pk=body["id"])
    assert judgement.panel is not None and judgement.panel.name == "deploy-gate"
    assert body["panel"] == {"id": judgement.panel.pk, "name": "deploy-gate"}
    assert [a["model"] for a in body["agents"]] == [local_files.BUNDLED_MODEL_NAME] * 3


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("empty_engine_channel")
async def test_the_api_names_the_panel_or_agents_field(fake_llm, api, other_user, user):
    theirs = await Panel.objects.acreate(
        name="Theirs", owner=other_user, agents=case_for()["agents"]
    )
    await Panel.objects.acreate(name="Mine", owner=user, agents=case_for()["agents"])
    base = {"title": "Trip", "content": "Japan"}
    # Both or neither, or not a name or an id, break the schema (400); a panel that does
    # not exist for this user is unknown by a rule the schema cannot express (422).
    cases = [
        ({**base, "panel": "Mine", "agents": case_for()["agents"]}, 400, {"panel", "agents"}),
        (base, 400, {"agents"}),
        ({**base, "panel": "Nope"}, 422, {"panel"}),
        ({**base, "panel": theirs.pk}, 422, {"panel"}),
        ({**base, "panel": "Theirs"}, 422, {"panel"}),
        ({**base, "panel": False}, 400, {"panel"}),
    ]
    for case, code, fields in cases:
        status, body = await post(api, case)
        assert status == code, case
        assert set(body["errors"]) == fields, case
    assert await Judgement.objects.acount() == 0


@pytest.mark.django_db(transaction=True)
async def test_the_api_lists_the_panels_the_caller_may_use(example_panels, api, other_user, user):
    mine = await Panel.objects.acreate(name="Mine", owner=user, agents=case_for()["agents"])
    await Panel.objects.acreate(name="Theirs", owner=other_user, agents=case_for()["agents"])
    response = await api.get("/api/panels/")
    document = (await AsyncClient().get("/api/schema.json")).json()
    listed = check(document, "/api/panels/", "get", response)["panels"]
    assert [p["name"] for p in listed] == ["Mine", *sorted(example_panels)]
    assert listed[0] == {
        "id": mine.pk,
        "name": "Mine",
        "description": "",
        "example": False,
        "owner": user.username,
        "team": None,
        "hold_contested": None,
        "run_checks": None,
        "prompt_variants": None,
        "escalate_to": None,
        "notify_contested": False,
        "reviewers": [],
        "team_reviews": False,
        "four_eyes": False,
        "agents": case_for()["agents"],
        "certificates": [],
        "version": 1,
        "etag": await sync_to_async(mine.etag)(),
    }
    assert all(p["example"] for p in listed[1:])
    check(document, "/api/panels/", "get", await TokenClient(None).get("/api/panels/"))


# The command line.


@pytest.mark.django_db(transaction=True)
def test_the_command_line_judges_with_any_users_panel(make_panel, other_user, tmp_path):
    panel = make_panel("Desk", owner=other_user)
    code, out, _ = run_judge(
        tmp_path, {"title": "Trip", "content": "Japan", "panel": panel.pk}, "--json"
    )
    assert code == 0
    assert json.loads(out)["status"] == "approved"
    judgement = Judgement.objects.get()
    assert judgement.panel == panel
    assert [a.name for a in judgement.agents.all()] == ["Melchior", "Balthasar", "Casper"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("case", "field"),
    [
        ({"title": "Trip", "content": "Japan", "panel": "Nope"}, "panel"),
        ({"title": "Trip", "content": "Japan"}, "agents"),
        ({**case_for(), "panel": "Desk"}, "panel"),
    ],
)
def test_the_command_line_exits_2_naming_the_field(make_panel, user, tmp_path, case, field):
    make_panel("Desk", owner=user)
    code, out, err = run_judge(tmp_path, case, "--json")
    assert code == 2 and out == ""
    assert f"invalid input: {field}: " in err
    assert Judgement.objects.count() == 0
