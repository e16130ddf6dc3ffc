"""The path of one panel edit through the code, as a reader walks it (issue 57): the
edit page's form posted (web/panel_pages.py `panel_edit`), from the view to the row.
Walked as a judgement's path is (tests/support/judgement_path.py): every call of a
function of `judgements/` with the panel among its arguments is a stop: its row, its id,
or an object holding its row (the form bound to it); stops in a row in one file are one
visit, and each time the walk comes back to a file it left is a new entry. Only calls
made while the view runs count: the middleware and the page's template are not the edit.
bench/panel_path.py prints the walk, tests/packaging/test_panel_path.py holds it to the
page's figure.
"""

from types import FrameType
from typing import Any

from tests.support.judgement_path import Walk

VIEW = "panel_edit"
# A panel id no other id, count or position can be mistaken for.
PANEL_ID = 4243
# The form as posted: two agents changed, the rest as the panel stands.
NAME = "Walked panel"


class PanelWalk(Walk):
    """The stops of one panel edit, taken while `panel_edit` runs."""

    def __init__(self, panel_id: int) -> None:
        super().__init__()
        self.panel_id = panel_id
        self.in_view = False

    def carries(self, value: Any, depth: int = 0) -> bool:
        if type(value) is int:
            return value == self.panel_id
        if type(value).__name__ == "Panel":
            return getattr(value, "pk", None) == self.panel_id
        attributes = getattr(value, "__dict__", None)
        if not isinstance(attributes, dict) or depth > 0:
            return False
        return any(self.carries(held, depth + 1) for held in attributes.values())

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if frame.f_code.co_name == VIEW:
            self.in_view = event == "call"
        if self.in_view:
            super().profile(frame, event, arg)

    def files_left_and_entered_again(self) -> int:
        entries = self.entries()
        return entries.total() - len(entries)


def edit(panel_id: int, escalate_to: int | None = None) -> PanelWalk:
    """Post the panel's edit form as its owner would (its agents, their models changed;
    `escalate_to`: naming that panel as the one its unkept verdicts go to), walking the
    view; the panel is saved (a redirect) or AssertionError."""
    import sys

    from django.test import Client

    from judgements.models import Panel

    panel = Panel.objects.select_related("owner").get(pk=panel_id)
    assert panel.owner is not None, "a panel with an owner, who edits it"
    client = Client(SERVER_NAME="localhost")
    client.force_login(panel.owner)
    form = posted_form(panel)
    if escalate_to is not None:
        form["escalate_to"] = str(escalate_to)
    walk = PanelWalk(panel_id)
    sys.setprofile(walk.profile)
    try:
        response = client.post(panel.get_absolute_url(), form)
    finally:
        sys.setprofile(None)
    assert response.status_code == 302, response.content.decode()[:2000]
    saved = Panel.objects.get(pk=panel_id)
    assert (saved.name, saved.escalate_to_id) == (NAME, escalate_to)
    return walk


def posted_form(panel: Any) -> dict[str, str]:
    """What the edit page posts for `panel`, renamed, its agents' criteria sharpened."""
    form = {
        "name": NAME,
        "description": panel.description,
        "hold_contested": "",
        "run_checks": "",
        "prompt_variants": "",
        "agents-TOTAL_FORMS": str(len(panel.agents)),
        "agents-INITIAL_FORMS": "0",
        "agents-MIN_NUM_FORMS": "3",
        "agents-MAX_NUM_FORMS": "3",
    }
    for index, agent in enumerate(panel.agents):
        form[f"agents-{index}-name"] = agent["name"]
        form[f"agents-{index}-model"] = agent["model"]
        form[f"agents-{index}-criteria"] = agent["criteria"] + " Sharpened."
    return form
