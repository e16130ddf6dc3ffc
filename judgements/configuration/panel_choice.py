"""A choice of one of the panels a user may use, as the new-judgement page and a suite's
"start a run" form both offer it: each panel labelled as that user sees it (the user's
own by name, another's with its owner, an example as such)."""

from typing import Any

from django import forms as django_forms
from django.contrib.auth.models import User

from judgements.infrastructure.forms import field_of
from judgements.models import Panel
from judgements.panels.saved_panels import visible


class PanelChoiceField(django_forms.ModelChoiceField[Panel]):
    """The panels `user` may use, each labelled as that user sees it (`label`);
    `required_message` says what to do when none is chosen."""

    def __init__(self, *, user: User | None = None, required_message: str, **kwargs: Any) -> None:
        super().__init__(
            queryset=Panel.objects.none(),
            empty_label="Choose a panel…",
            error_messages={
                "required": required_message,
                "invalid_choice": "That panel is not there any more, or is not yours to use.",
            },
            **kwargs,
        )
        self.for_user(user)

    def for_user(self, user: User | None) -> None:
        self.queryset = visible(user)
        self.user = user

    def label_from_instance(self, obj: Panel) -> str:
        return label(obj, self.user)


class ChoosePanelForm(django_forms.Form):
    start_panel = PanelChoiceField(required_message="Choose a panel to start from.")

    def __init__(self, *args: Any, user: User | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field_of(self, "start_panel", PanelChoiceField).for_user(user)


def label(panel: Panel, user: User | None) -> str:
    owner = panel.owner  # select_related by saved_panels.visible
    if owner is None:
        return f"{panel.name} (example)"
    if user is not None and owner.pk == user.pk:
        return panel.name
    return f"{panel.name} ({owner.get_username()})"
