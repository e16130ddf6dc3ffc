"""A saved panel's prompt variants (judgements/panels/variant_setting.py): its own
setting else the site's default, typed as names joined with "+", and what is wrong with a
bad one."""

import pytest

from judgements.core.errors import InvalidInput
from judgements.panels import variant_setting

pytestmark = pytest.mark.django_db


def test_a_panels_variants_are_its_setting_else_the_site_default(make_panel):
    panel = make_panel("Desk")
    assert variant_setting.variants_for(panel) == variant_setting.site_default_variants()
    assert variant_setting.variants_for(None) == variant_setting.site_default_variants()
    panel.prompt_variants = ["decisions_only", "quote"]
    assert variant_setting.variants_for(panel) == {"decisions_only", "quote"}
    panel.prompt_variants = []
    assert variant_setting.variants_for(panel) == frozenset()
    # A setting that no longer parses (a variant removed since) is refused, naming the panel.
    panel.prompt_variants = ["reason_last"]
    with pytest.raises(InvalidInput) as refused:
        variant_setting.variants_for(panel)
    assert "reason_last" in refused.value.errors["panel"][0]


@pytest.mark.parametrize(
    ("typed", "setting"),
    [
        ("", None),
        ("  ", None),
        ("none", []),
        ("quote+decision_first", ["quote", "decision_first"]),
        (" calibrated + decision_first ", ["calibrated", "decision_first"]),
    ],
)
def test_the_setting_is_typed_as_names_joined_with_plus(typed, setting):
    assert variant_setting.variants_from_text(typed) == setting
    shown = variant_setting.variants_text(setting)
    assert variant_setting.variants_from_text(shown) == setting


@pytest.mark.parametrize(
    ("typed", "words"),
    [
        ("quote+reason_last", "Unknown prompt variant 'reason_last'"),
        ("named_peers+decisions_only", "named_peers and decisions_only both say"),
        ("quote+quote", "named twice"),
        ("quote+", "Unknown prompt variant ''"),
    ],
)
def test_a_bad_setting_says_what_is_wrong(typed, words):
    with pytest.raises(ValueError, match=words):
        variant_setting.variants_from_text(typed)
