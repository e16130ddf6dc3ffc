"""A case's rows (judgements/intake/rows.py): what a judgement holds besides what was
typed is decided once, from the typed case, at submit."""

import pytest

from judgements.core import text
from judgements.intake import rows
from judgements.models import ApiToken, Team
from tests.support.cases import typed_case

pytestmark = pytest.mark.django_db


def test_hold_contested_is_the_case_s_else_its_panel_s_else_the_site_s(make_panel, settings):
    panel = make_panel("Desk")
    settings.MAGI_HOLD_CONTESTED = True
    assert rows.hold_contested(typed_case())
    assert not rows.hold_contested(typed_case(hold_contested=False))
    panel.hold_contested = False
    assert not rows.hold_contested(typed_case(panel=panel))
    assert rows.hold_contested(typed_case(panel=panel, hold_contested=True))
    panel.hold_contested = None
    assert rows.hold_contested(typed_case(panel=panel))


def test_a_judgement_belongs_to_its_panel_s_team_else_its_token_s(make_panel, user):
    panel = make_panel("Desk", owner=user)
    token, _ = ApiToken.issue(user, "ci")
    assert rows.team_for(panel, token, None) is None
    token.team = Team.objects.create(name="Tokens")
    assert rows.team_for(panel, token, None) == token.team
    panel.team = Team.objects.create(name="Panels")
    assert rows.team_for(panel, token, None) == panel.team


def test_the_row_holds_what_the_case_and_the_defaults_say(make_panel, settings):
    settings.MAGI_HOLD_UNMEASURED = True
    panel = make_panel("Desk")
    judgement = rows.judgement_row(typed_case(panel=panel, prompt_variants=("quote",)))
    assert (judgement.title, judgement.panel, judgement.hold_unmeasured) == (
        "Trip to Japan",
        panel,
        True,
    )
    assert judgement.prompt_variants == ["quote"] and judgement.pk is None
    assert not rows.judgement_row(typed_case(hold_unmeasured=False)).hold_unmeasured


def test_agent_rows_are_in_panel_order_with_their_name_keys():
    made = rows.agent_rows(7, typed_case().agents)
    assert [(a.judgement_id, a.position, a.name) for a in made] == [
        (7, 1, "Melchior"),
        (7, 2, "Balthasar"),
        (7, 3, "Casper"),
    ]
    assert made[0].name_key == text.name_key("Melchior")


def test_a_judgement_reads_back_as_the_case_it_was_typed_as(make_judgement):
    judgement = make_judgement(title="Again")
    case = rows.case_of(judgement)
    assert (case.title, case.content) == (judgement.title, judgement.content)
    assert case.agents == typed_case().agents
