"""A choice of one of the panels a user may use (judgements/configuration/panel_choice.py):
only those, each labelled as that user sees it, and a clear word for none or another's."""

import pytest
from django.contrib.auth import get_user_model

from judgements.configuration import panel_choice

pytestmark = pytest.mark.django_db


def test_it_offers_the_users_panels_and_the_examples_labelled_as_they_see_them(
    make_panel, user, other_user
):
    mine, example = make_panel("Desk", owner=user), make_panel("Shared")
    make_panel("Theirs", owner=other_user)
    field = panel_choice.PanelChoiceField(user=user, required_message="Choose one.")
    assert field.queryset is not None
    offered = sorted(field.label_from_instance(panel) for panel in field.queryset)
    assert offered == ["Desk", "Shared (example)"]
    assert field.clean(str(mine.pk)) == mine and field.clean(str(example.pk)) == example


def test_staff_see_another_users_panel_under_its_owners_name(make_panel, other_user):
    theirs = make_panel("Theirs", owner=other_user)
    staff = get_user_model().objects.create_user("ops", is_staff=True)
    field = panel_choice.PanelChoiceField(user=staff, required_message="Choose one.")
    assert field.queryset is not None and theirs in field.queryset
    assert field.label_from_instance(theirs) == "Theirs (bob)"


def test_none_chosen_or_anothers_is_refused_in_words(make_panel, user, other_user):
    theirs = make_panel("Theirs", owner=other_user)
    form = panel_choice.ChoosePanelForm({"start_panel": ""}, user=user)
    assert form.errors["start_panel"] == ["Choose a panel to start from."]
    form = panel_choice.ChoosePanelForm({"start_panel": str(theirs.pk)}, user=user)
    assert form.errors["start_panel"] == [
        "That panel is not there any more, or is not yours to use."
    ]
