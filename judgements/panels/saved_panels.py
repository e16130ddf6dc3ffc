"""Looking saved panels up: the ones a user may use, the one a case names, and a panel's
agents in the shape a case takes them. Below intake, which resolves the panel a case
names (intake/json_cases.py), and every area that looks a panel up for a user; saving a
panel and the shipped examples are judgements/configuration/saving.py's, its prompt
variants setting panels/variant_setting.py's.

Who sees what: a user uses their own panels and the examples; staff, and the command
line's operator (user None), every panel. A panel is named by its id or its name, the
user's own panels before the examples.
"""

from typing import TYPE_CHECKING, TypedDict

from django.contrib.auth.models import User
from django.db.models import Case, IntegerField, QuerySet, Value, When

from judgements.core import text
from judgements.core.errors import InvalidInput
from judgements.models.choices import ID_MAX
from judgements.models.panels import Panel, StoredAgent

if TYPE_CHECKING:  # django-stubs-ext is a test (type-check) dependency only
    from django_stubs_ext import WithAnnotations

NOT_A_REFERENCE = "Must be a saved panel's name (a string) or id (an integer)."
OTHERS = 2  # the group of other users' panels, which only staff and the operator see


class Grouped(TypedDict):
    group: int


def visible(user: User | None) -> "QuerySet[WithAnnotations[Panel, Grouped]]":
    """The panels the user may use, their own first, then the examples, then (for staff
    and the operator) everyone else's, each group by name."""
    panels = Panel.objects.visible_to(user).select_related("owner")
    groups = [When(owner__isnull=True, then=Value(1))]
    if user is not None:
        groups.insert(0, When(owner=user, then=Value(0)))
    group = Case(*groups, default=Value(OTHERS), output_field=IntegerField())
    grouped: QuerySet[WithAnnotations[Panel, Grouped]] = panels.annotate(group=group)
    return grouped.order_by("group", "name", "id")


def resolve(reference: str | int, user: User | None) -> Panel:
    """The panel a case or a form names: an integer is an id; a string is a name (compared
    as agent names are, text.comparable_name), or else a decimal id. A panel the user may
    not use is as unknown as one that does not exist."""
    if isinstance(reference, bool) or not isinstance(reference, int | str):
        raise InvalidInput({"panel": [NOT_A_REFERENCE]})
    panels = visible(user)
    if isinstance(reference, int):
        found = by_id(panels, reference)
    else:
        found = by_name(panels, reference)
        if found is None and is_decimal_id(reference):
            found = by_id(panels, int(reference))
    if found is None:
        shown = reference if isinstance(reference, int) else repr(text.escaped(reference))
        raise InvalidInput({"panel": [f"No panel {shown} that you may use."]})
    return found


def is_decimal_id(value: str) -> bool:
    # Only plain ASCII digits: str.isdecimal() also takes other scripts' digits.
    return value.isascii() and value.isdecimal() and len(value) <= len(str(ID_MAX))


def by_id(panels: "QuerySet[WithAnnotations[Panel, Grouped]]", panel_id: int) -> Panel | None:
    if not 1 <= panel_id <= ID_MAX:
        return None
    return panels.filter(pk=panel_id).first()


def by_name(panels: "QuerySet[WithAnnotations[Panel, Grouped]]", name: str) -> Panel | None:
    key = text.comparable_name(name)
    if not key:
        return None
    candidates = panels.only("id", "name", "owner")
    matches = [panel for panel in candidates if text.comparable_name(panel.name) == key]
    if not matches:
        return None
    first = matches[0]
    # Only staff and the operator see other users' panels, where one name can repeat.
    if first.group == OTHERS and len(matches) > 1:
        raise InvalidInput(
            {"panel": [f"{len(matches)} users have a panel called {name!r}: give its id."]}
        )
    return first


def agents_of(panel: Panel) -> list[StoredAgent]:
    """The panel's agents, in the shape a case's "agents" takes."""
    return panel.stored_agents()
