"""The page's forms of a case (judgements/intake/cases.py): the POST fields a case is
typed into, which nothing but the forms bound to them checks."""

from judgements.intake import cases
from judgements.intake.cases import FormInitial
from tests.support.cases import case_for


def typed(models: tuple[str, ...] = ("model-a", "model-b", "model-c")) -> FormInitial:
    agents = [cases.typed_agent(agent, "") for agent in case_for(models)["agents"]]
    return {"title": "Trip", "content": "To Japan", "hold_contested": "yes", "agents": agents}


def test_posted_fields_read_back_as_the_case_typed():
    case = typed()
    assert cases.typed_case(cases.posted_fields(case)) == case


def test_posted_fields_keep_what_the_forms_will_refuse():
    # Not a validator: an empty title and a model nobody serves are posted as typed.
    case = typed(models=("model-a", "model-b", "gpt-nope"))
    case["title"] = ""
    fields = cases.posted_fields(case)
    assert (fields["title"], fields["agents-2-model"]) == ("", "gpt-nope")
    assert fields["agents-TOTAL_FORMS"] == "3"
