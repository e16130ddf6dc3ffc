"""A case sent as JSON (the API's, the command line's): validated by its schema, then its
saved panel looked up (judgements/intake/json_cases.py)."""

import pytest

from judgements.core.errors import InvalidInput
from judgements.intake import json_cases, schemas
from judgements.panels import saved_panels
from tests.support.cases import case_for

pytestmark = pytest.mark.django_db


def test_a_case_naming_a_panel_gets_a_copy_of_its_agents(make_panel, user):
    panel = make_panel("Desk", owner=user, models=("model-b", "model-c", "model-a"))
    case = json_cases.validate_case({"title": "Trip", "content": "To Japan", "panel": "Desk"}, user)
    assert (case.panel, case.panel_named) == (panel, None)
    assert [agent.stored() for agent in case.agents] == saved_panels.agents_of(panel)
    assert json_cases.validate_case(case_for(), user).panel is None


@pytest.mark.parametrize(
    ("case", "errors"),
    [
        (
            {**case_for(), "panel": "Desk"},
            {"panel": [schemas.BOTH_GIVEN], "agents": [schemas.BOTH_GIVEN]},
        ),
        ({"title": "Trip", "content": "Japan"}, {"agents": [schemas.NEITHER_GIVEN]}),
        # What breaks the schema is named first; the panel is looked up once it passes.
        (
            {"title": "", "content": "Japan", "panel": "Nope"},
            {"title": ["This field is required."]},
        ),
        (
            {"title": "T", "content": "Japan", "panel": "Nope"},
            {"panel": ["No panel 'Nope' that you may use."]},
        ),
        (
            {"title": "Trip", "content": "Japan", "panel": "Desk", "x": 1},
            {
                "x": [
                    "Unknown field; the fields here are title, content, agents, panel, "
                    "hold_contested."
                ]
            },
        ),
    ],
)
def test_a_case_gives_either_agents_or_a_panel(make_panel, user, case, errors):
    make_panel("Desk", owner=user)
    with pytest.raises(InvalidInput) as refused:
        json_cases.validate_case(case, user)
    assert refused.value.errors == errors


def test_a_panels_agent_on_a_model_no_longer_served_is_named(make_panel, user, fake_llm):
    make_panel("Desk", owner=user)
    fake_llm.models.remove("model-a")
    with pytest.raises(InvalidInput) as refused:
        json_cases.validate_case({"title": "T", "content": "C", "panel": "Desk"}, user)
    assert list(refused.value.errors) == ["panel.agents[0].model"]


def test_a_json_case_names_its_panel_until_submit_looks_it_up(make_panel, user):
    panel = make_panel("Desk", owner=user)
    named = schemas.validated(schemas.CaseJson, {"title": "T", "content": "C", "panel": "Desk"})
    case = named.case()
    assert (case.panel_named, case.panel, case.agents) == ("Desk", None, ())
    assert json_cases.resolve_case(case, user).panel == panel


def test_a_case_naming_no_panel_and_no_url_is_already_resolved(fake_llm, user):
    case = json_cases.validate_case(case_for(), user)
    assert json_cases.resolve_case(case, user) is case


def test_agents_are_checked_against_the_models_a_caller_allows(fake_llm):
    # The shipped example panels run on the bundled model, served or not
    # (configuration/saving.py ensure_examples).
    local = case_for(models=("local", "local", "local"))["agents"]
    assert [agent.model for agent in schemas.validated_agents(local, ["local"])] == ["local"] * 3
    with pytest.raises(InvalidInput) as refused:
        schemas.validated_agents(case_for()["agents"], ["local"])
    assert sorted(refused.value.errors) == [f"agents[{i}].model" for i in range(3)]
