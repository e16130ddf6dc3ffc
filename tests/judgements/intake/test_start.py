"""The one way in (judgements/intake/start.py): `submit` takes the same checks in the same
order for every entry point: limits, idempotency, panel resolution, budgets; a case given
as JSON comes validated by its schema where it comes in. Each test here fails if two of
them swap. That every entry point goes through it is tests/packaging/test_one_way_in.py's."""

import pytest

from judgements.core import prompt_variants
from judgements.core.errors import InvalidInput, Refused
from judgements.core.prompt_variants import Variant
from judgements.intake import idempotency, json_cases
from judgements.intake.start import Submission, submit
from judgements.models import IdempotencyKey, Judgement
from tests.support.cases import case_for, json_case, typed_case, validated

pytestmark = pytest.mark.django_db

INVALID = {"title": "", "content": "To Japan", "panel": "Nope"}
# Valid by its schema, but no such panel: refused when its panel is looked up.
NO_SUCH_PANEL = {"title": "Trip", "content": "To Japan", "panel": "Nope"}


@pytest.fixture
def one_a_window(settings, fake_llm):
    settings.MAGI_RATE_WINDOW_SECONDS = 60
    settings.MAGI_RATE_LIMIT_PER_USER = 1
    settings.MAGI_UNFINISHED_PER_USER = 0


def test_over_a_limit_the_cases_panel_is_not_even_looked_up(one_a_window, user):
    submit([json_case()], Submission(creator=user))
    with pytest.raises(Refused):
        submit([validated(NO_SUCH_PANEL)], Submission(creator=user))
    assert Judgement.objects.count() == 1


def test_a_retry_gets_its_judgement_back_before_its_panel_is_looked_up_again(
    one_a_window, make_panel, user
):
    panel = make_panel("Desk", owner=user)
    case = {"title": "Trip", "content": "To Japan", "panel": "Desk"}
    by = Submission(creator=user, key="trip-1", body=case)
    first = submit([validated(case)], by)
    panel.delete()
    # Over the limit too: a retry is neither limited nor checked again.
    again = submit([validated(case)], by)
    assert again.replayed
    assert again.judgement == first.judgement
    assert Judgement.objects.count() == 1


def test_a_key_used_with_another_body_is_refused_before_its_panel_is_looked_up(fake_llm, user):
    submit([json_case()], Submission(creator=user, key="k", body=case_for()))
    with pytest.raises(idempotency.KeyReused):
        submit([validated(NO_SUCH_PANEL)], Submission(creator=user, key="k", body=NO_SUCH_PANEL))


def test_a_json_case_is_validated_where_it_comes_in_before_its_panel_is_looked_up(fake_llm, user):
    with pytest.raises(InvalidInput) as refused:
        json_cases.validate_case(INVALID, user)
    assert list(refused.value.errors) == ["title"]
    assert not IdempotencyKey.objects.exists()


def test_a_panel_is_looked_up_for_the_creator_and_for_the_operator_among_all(
    fake_llm, make_panel, user, other_user
):
    make_panel("Theirs", owner=other_user)
    case = {"title": "Trip", "content": "To Japan", "panel": "Theirs"}
    with pytest.raises(InvalidInput) as refused:
        submit([validated(case)], Submission(creator=user))
    assert list(refused.value.errors) == ["panel"]
    started = submit([validated(case)], Submission())
    assert started.judgement.panel is not None and started.judgement.panel.name == "Theirs"
    assert started.judgement.agents.count() == 3


def test_a_checked_case_is_stored_as_its_entry_point_checked_it(fake_llm, user):
    case = typed_case()
    started = submit([case], Submission(creator=user))
    assert started.status_code == 201 and not started.replayed
    assert [a.name for a in started.judgement.agents.all()] == [a.name for a in case.agents]


def test_a_case_that_names_no_variants_stores_the_default_it_ran(fake_llm, user, monkeypatch):
    # The default is one constant; set to a non-empty one here so the test tells "the
    # default" from "none" (with the original prompts as default both are empty).
    monkeypatch.setattr(prompt_variants, "DEFAULT", frozenset({prompt_variants.Variant.QUOTE}))
    unnamed = submit([typed_case()], Submission(creator=user))
    assert unnamed.judgement.prompt_variants == ["quote"]
    named = typed_case(prompt_variants=("decision_first",))
    assert submit([named], Submission(creator=user)).judgement.prompt_variants == ["decision_first"]
    # An empty list (what "original" resolves to) runs none, whatever the default.
    original = typed_case(prompt_variants=())
    assert submit([original], Submission(creator=user)).judgement.prompt_variants == []


def test_a_judgement_runs_its_saved_panels_prompt_variants(fake_llm, make_panel, user):
    panel = make_panel("Desk", owner=user)
    panel.prompt_variants = ["quote", "decision_first"]
    panel.save(update_fields=["prompt_variants"])
    case = {"title": "Trip", "content": "To Japan", "panel": "Desk"}
    # As the API, the MCP tools and the gate send it, and as the page checks it.
    from_json = submit([validated(case)], Submission(creator=user)).judgement
    from_page = submit([typed_case(panel=panel)], Submission(creator=user))
    for judgement in (from_json, from_page.judgement):
        assert judgement.prompt_variants == ["decision_first", "quote"]
    # A caller naming its own (an evaluation run) keeps them, [] included.
    own = submit([typed_case(panel=panel, prompt_variants=())], Submission())
    assert own.judgement.prompt_variants == []


def test_without_a_panel_or_its_setting_a_judgement_runs_the_site_default(
    fake_llm, make_panel, user, monkeypatch
):
    make_panel("Desk", owner=user)  # prompt_variants None: not set
    case = {"title": "Trip", "content": "To Japan", "panel": "Desk"}
    default = sorted(prompt_variants.DEFAULT)
    assert submit([validated(case)], Submission(creator=user)).judgement.prompt_variants == default
    assert submit([json_case()], Submission(creator=user)).judgement.prompt_variants == default
    # The default, named in one place (prompt_variants.DEFAULT), whatever it is.
    monkeypatch.setattr(prompt_variants, "DEFAULT", frozenset({Variant.QUOTE}))
    assert submit([validated(case)], Submission(creator=user)).judgement.prompt_variants == [
        "quote"
    ]
    assert submit([json_case()], Submission(creator=user)).judgement.prompt_variants == ["quote"]
