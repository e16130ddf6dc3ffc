"""A case as one typed value (judgements/intake/case.py): what every way in makes and
intake/rows.py makes the rows from."""

import dataclasses

import pytest

from judgements.intake.case import Case, CaseAgent, agents_of
from tests.support.cases import case_for, typed_case


def test_a_case_s_agents_keep_what_was_typed_in_panel_order():
    agents = case_for()["agents"]
    case = Case(title="T", content="C", agents=agents_of(agents))
    assert [agent.stored() for agent in case.agents] == agents
    assert case.models() == ["model-a", "model-b", "model-c"]
    assert case.agents[0] == CaseAgent("Melchior", "model-a", "Melchior approves only safe plans.")


def test_a_case_cannot_change_on_its_way_to_the_row():
    case = typed_case()
    with pytest.raises(dataclasses.FrozenInstanceError):
        case.title = "Another"
    with pytest.raises(dataclasses.FrozenInstanceError):
        case.agents[0].model = "model-z"


def test_a_case_leaves_to_the_defaults_what_it_does_not_say():
    case = typed_case()
    assert case.hold_contested is None and case.hold_unmeasured is None
    assert case.prompt_variants is None and case.panel is None and case.callback_url is None
    assert not case.plain_call
