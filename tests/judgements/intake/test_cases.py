"""The page's forms of a case (judgements/intake/cases.py): the POST fields a case is
typed into, which nothing but the forms bound to them checks."""

from judgements.intake import cases
from tests.support.cases import case_for


def test_posted_fields_read_back_as_the_case_typed():
    case = case_for(hold_contested="yes")
    assert cases.typed_case(cases.posted_fields(case)) == case


def test_posted_fields_keep_what_the_forms_will_refuse():
    # Not a validator: an empty title and a model nobody serves are posted as typed.
    case = case_for(models=("model-a", "model-b", "gpt-nope"), title="")
    fields = cases.posted_fields(case)
    assert (fields["title"], fields["agents-2-model"]) == ("", "gpt-nope")
    assert fields["agents-TOTAL_FORMS"] == "3"
