import pytest

from judgements.core import prompt_variants, prompts
from judgements.core.prompt_variants import Variant
from tests.support.json_paths import list_at, object_at


def test_it_parses_known_variants_and_names_an_unknown_one():
    assert prompt_variants.parse(["quote", "decision_first"]) == {
        Variant.QUOTE,
        Variant.DECISION_FIRST,
    }
    with pytest.raises(ValueError, match="'reason_last'"):
        prompt_variants.parse(["reason_last"])


def test_it_rejects_two_ways_of_showing_earlier_rounds():
    with pytest.raises(ValueError, match="named_peers and decisions_only"):
        prompt_variants.parse(["named_peers", "decisions_only"])


def test_a_label_is_stable_and_original_for_none():
    assert prompt_variants.label([]) == "original"
    assert prompt_variants.label(["quote", "decision_first"]) == "decision_first+quote"


def test_the_answer_keys_follow_the_variants():
    assert prompt_variants.answer_keys(frozenset()) == [
        "reason",
        "criterion_met",
        "decision",
        "missing",
    ]
    assert prompt_variants.answer_keys(frozenset({Variant.DECISION_FIRST, Variant.QUOTE})) == [
        "criterion_met",
        "decision",
        "quote",
        "reason",
        "missing",
    ]


def test_original_names_the_prompts_without_any_variant_and_stands_alone():
    assert prompt_variants.parse(["original"]) == frozenset()
    with pytest.raises(ValueError, match="stands alone"):
        prompt_variants.parse(["original", "quote"])


def test_nothing_asked_resolves_to_the_default_and_an_empty_list_to_none():
    assert prompt_variants.resolve(None) == prompt_variants.DEFAULT
    assert prompt_variants.resolve([]) == frozenset()
    assert prompt_variants.resolve(["quote"]) == {Variant.QUOTE}
    # The default is a valid set of variants: it parses as itself.
    assert prompt_variants.parse(prompt_variants.DEFAULT) == prompt_variants.DEFAULT


AGENT = prompts.AgentBrief("Balthasar", "Review. Approve when someone else reviewed it.")
CONTENT = "Deploy abc123 on Monday; Priya reviewed it."


def test_no_missing_leaves_the_key_out_of_the_rules_and_the_answer():
    variants = frozenset({Variant.NO_MISSING})
    assert prompt_variants.answer_keys(variants) == ["reason", "criterion_met", "decision"]
    assert "missing" not in prompts.rules_text(variants)
    assert "does not state" not in prompts.rules_text(variants)
    for schema in (
        prompts.verdict_schema(variants=variants),
        *list_at(prompts.verdict_schema(tied=True, variants=variants), "anyOf"),
    ):
        assert "missing" not in object_at(schema, "properties")
        assert "missing" not in list_at(schema, "required")
    # Every other variant keeps it, as the original prompts do.
    assert "missing" in prompt_variants.answer_keys(frozenset({Variant.SHORT_RULES}))


def test_criterion_first_gives_the_criterion_before_the_content():
    variants = frozenset({Variant.CRITERION_FIRST})
    user = prompts.build_messages(AGENT, CONTENT, 1, [], variants=variants)[1]["content"]
    assert user.index(AGENT.criteria) < user.index(CONTENT)
    assert user.startswith(f"You are Balthasar. Your criterion:\n{AGENT.criteria}\n")
    assert user.endswith(
        "This is round 1 of 3. Does the content above satisfy your criterion?\n"
        + prompts.ANSWER_WITH_JSON
    )
    assert user.count(AGENT.criteria) == 1
    # Without it the criterion comes last, as measured.
    plain = prompts.build_messages(AGENT, CONTENT, 1, [])[1]["content"]
    assert plain.index(CONTENT) < plain.index(AGENT.criteria)
    # The plain wording says where its criterion is.
    both = prompts.rules_text(frozenset({Variant.CRITERION_FIRST, Variant.PLAIN_RULES}))
    assert "the\none given first in the user's message" in both
