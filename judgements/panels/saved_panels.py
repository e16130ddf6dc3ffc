"""Saved panels: three agents under a name, to start judgements from.

A panel's agents are validated exactly as a judgement's are (cases.AgentFormSet) and
stored as JSON. A judgement started from a panel copies them into its own Agent rows and
records the panel (Judgement.panel), so editing the panel later changes no judgement.
Example panels have no owner; they ship as JSON files in judgements/examples/panels/ and
`manage.py load_examples` creates them (ensure_examples).

Who sees what: a user uses their own panels and the examples; staff, and the command
line's operator (user None), every panel. A panel is named by its id or its name, the
user's own panels before the examples.
"""

from pathlib import Path

from django.db.models import Case, IntegerField, QuerySet, Value, When

from judgements.core import rules, text
from judgements.core.errors import InvalidInput
from judgements.intake import cases
from judgements.models import Panel

EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "examples" / "panels"
NAME_MAX_CHARS = 100  # Panel.name's max_length
DESCRIPTION_MAX_CHARS = 1_000
EXAMPLE_FIELDS = ("name", "description", "agents")
# Ids are 64-bit integers in every database we run on; a larger number names no panel
# (and SQLite would refuse to compare with it).
ID_MAX = 2**63 - 1

BOTH_GIVEN = 'Give either "agents" or "panel", not both.'
NEITHER_GIVEN = (
    f'Give "agents" (a list of {rules.PANEL_SIZE} agents) or "panel" (a saved panel\'s name or id).'
)
NOT_A_REFERENCE = "Must be a saved panel's name (a string) or id (an integer)."


def visible(user) -> QuerySet:
    """The panels the user may use, their own first, then the examples, then (for staff
    and the operator) everyone else's, each group by name."""
    panels = Panel.objects.visible_to(user).select_related("owner")
    groups = [When(owner__isnull=True, then=Value(1))]
    if user is not None:
        groups.insert(0, When(owner=user, then=Value(0)))
    group = Case(*groups, default=Value(2), output_field=IntegerField())
    return panels.annotate(group=group).order_by("group", "name", "id")


def resolve(reference: str | int, user) -> Panel:
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


def by_id(panels: QuerySet, panel_id: int) -> Panel | None:
    if not 1 <= panel_id <= ID_MAX:
        return None
    return panels.filter(pk=panel_id).first()


def by_name(panels: QuerySet, name: str) -> Panel | None:
    key = text.comparable_name(name)
    if not key:
        return None
    candidates = panels.only("id", "name", "owner")
    matches = [panel for panel in candidates if text.comparable_name(panel.name) == key]
    if not matches:
        return None
    first = matches[0]
    # Only staff and the operator see other users' panels, where one name can repeat.
    if first.group == 2 and len(matches) > 1:
        raise InvalidInput(
            {"panel": [f"{len(matches)} users have a panel called {name!r}: give its id."]}
        )
    return first


def agents_of(panel: Panel) -> list[dict]:
    """The panel's agents, in the shape a case's "agents" takes."""
    return [{field: agent[field] for field in cases.AGENT_FIELDS} for agent in panel.agents]


def as_result(panel: Panel) -> dict:
    """A panel as GET /api/panels/ lists it."""
    return {
        "id": panel.pk,
        "name": panel.name,
        "description": panel.description,
        "example": panel.owner_id is None,
        "hold_contested": panel.hold_contested,
        "agents": agents_of(panel),
    }


def listing(user) -> list[dict]:
    return [as_result(panel) for panel in visible(user)]


# Judging with a panel: the API's and the command line's case.


def expand_panel(case, user):
    """The case with the named panel's agents under "agents" and the Panel itself under
    "panel"; a case without "panel" comes back as it is. InvalidInput names "panel" (unknown,
    or not the user's to use) or "panel" and "agents" (both given)."""
    if not isinstance(case, dict) or "panel" not in case:
        return case
    if "agents" in case:
        raise InvalidInput({"panel": [BOTH_GIVEN], "agents": [BOTH_GIVEN]})
    try:
        panel = resolve(case["panel"], user)
    except InvalidInput as exc:
        raise InvalidInput(exc.errors) from None
    return {**case, "agents": agents_of(panel), "panel": panel}


HOLD_FIELD = "hold_contested"


def validate_case(case, user, also_known: tuple[str, ...] = ()) -> dict:
    """validate_panel_case, plus the optional "hold_contested" (true or false): hold a
    contested verdict for a person (Judgement.hold_contested). Absent or null: the saved
    panel's choice, else the deployment's MAGI_HOLD_CONTESTED."""
    if not isinstance(case, dict) or HOLD_FIELD not in case:
        return validate_panel_case(case, user, (HOLD_FIELD, *also_known))
    hold = case[HOLD_FIELD]
    hold_errors = (
        {} if hold is None or isinstance(hold, bool) else {HOLD_FIELD: ["Must be true or false."]}
    )
    rest = {key: value for key, value in case.items() if key != HOLD_FIELD}
    try:
        cleaned = validate_panel_case(rest, user, (HOLD_FIELD, *also_known))
    except InvalidInput as exc:
        exc.errors.update(hold_errors)
        raise
    if hold_errors:
        raise InvalidInput(hold_errors)
    return {**cleaned, HOLD_FIELD: hold}


def validate_panel_case(case, user, also_known: tuple[str, ...] = ()) -> dict:
    """cases.validate_case for a case that may name a saved panel in place of its agents.

    The cleaned case carries the Panel (or None) under "panel", which
    intake/start.py records. Every error shows at once: a wrong panel and
    a blank title are both reported. A panel's agents are validated like typed ones: a
    model this deployment no longer serves is reported as `panel.agents[0].model`.
    """
    if not isinstance(case, dict) or ("panel" not in case and "agents" in case):
        return {**cases.validate_case(case, ("panel", *also_known)), "panel": None}
    errors: dict[str, list[str]] = {}
    panel = None
    rest = {key: value for key, value in case.items() if key != "panel"}
    if "panel" not in case:
        errors["agents"] = [NEITHER_GIVEN]
    else:
        try:
            rest = expand_panel(case, user)
        except InvalidInput as exc:
            errors.update(exc.errors)
        else:
            panel = rest.pop("panel")
    if errors:
        # Stand-in agents, whose own errors are dropped below, so the title's and the
        # content's are still found.
        rest["agents"] = [dict.fromkeys(cases.AGENT_FIELDS, "")] * rules.PANEL_SIZE
    try:
        cleaned = cases.validate_case(rest, ("panel", *also_known))
    except InvalidInput as exc:
        for field, messages in exc.errors.items():
            if is_agents_field(field):
                if errors:
                    continue  # missing because of the panel error above
                field = f"panel.{field}"
            errors[field] = messages
    if errors:
        raise InvalidInput(errors)
    return {**cleaned, "panel": panel}


def is_agents_field(field: str) -> bool:
    return field == "agents" or field.startswith("agents[")


# Saving a panel: the page's forms, and JSON (the shipped examples).
