"""Naming a saved panel (judgements/panels/saved_panels.py): by id or by name, the user's
own before an example's, and the panels a user may not use."""

import pytest

from judgements.core.errors import InvalidInput
from judgements.panels import saved_panels

pytestmark = pytest.mark.django_db


def test_it_resolves_a_panel_by_id_and_by_name(make_panel, user):
    panel = make_panel("Deploy gate", owner=user)
    assert saved_panels.resolve(panel.pk, user) == panel
    assert saved_panels.resolve(str(panel.pk), user) == panel
    # Names compare as agent names do: case, compatibility forms and spacing aside.
    assert saved_panels.resolve("DEPLOY  gate", user) == panel
    full_width = "".join(chr(ord(c) + 0xFEE0) for c in "deploy")
    assert saved_panels.resolve(f"{full_width} gate", user) == panel


def test_the_users_own_panel_comes_before_an_example_of_the_same_name(make_panel, user):
    example = make_panel("Deploy gate", owner=None)
    own = make_panel("deploy gate", owner=user)
    assert saved_panels.resolve("Deploy gate", user) == own
    assert saved_panels.resolve(example.pk, user) == example


def test_another_users_panel_is_unknown(make_panel, user, other_user):
    theirs = make_panel("Secret desk", owner=other_user)
    for reference in (theirs.pk, str(theirs.pk), "Secret desk"):
        with pytest.raises(InvalidInput) as refused:
            saved_panels.resolve(reference, user)
        assert list(refused.value.errors) == ["panel"]
        assert "that you may use" in refused.value.errors["panel"][0]


def test_staff_and_the_operator_may_use_any_panel(make_panel, user, other_user):
    theirs = make_panel("Secret desk", owner=other_user)
    user.is_staff = True
    assert saved_panels.resolve(theirs.pk, user) == theirs
    assert saved_panels.resolve("Secret desk", None) == theirs


def test_the_operator_must_give_an_id_when_two_users_share_a_name(make_panel, user, other_user):
    make_panel("Desk", owner=user)
    make_panel("Desk", owner=other_user)
    with pytest.raises(InvalidInput) as refused:
        saved_panels.resolve("Desk", None)
    assert refused.value.errors == {"panel": ["2 users have a panel called 'Desk': give its id."]}


@pytest.mark.parametrize("reference", [True, 1.5, None, ["Desk"], {"id": 1}])
def test_a_reference_must_be_a_name_or_an_id(make_panel, user, reference):
    make_panel("Desk", owner=user)
    with pytest.raises(InvalidInput) as refused:
        saved_panels.resolve(reference, user)
    assert refused.value.errors == {"panel": [saved_panels.NOT_A_REFERENCE]}


@pytest.mark.parametrize("reference", [0, -1, 2**70, "9" * 30, "", "   ", "\ud800"])
def test_ids_and_names_that_match_nothing_are_unknown(make_panel, user, reference):
    make_panel("Desk", owner=user)
    with pytest.raises(InvalidInput) as refused:
        saved_panels.resolve(reference, user)
    assert list(refused.value.errors) == ["panel"]
