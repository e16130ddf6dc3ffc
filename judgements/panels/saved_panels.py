"""Looking saved panels up: the ones a user may use, the one a case names, and a panel's
agents in the shape a case takes them. It lives with intake because a case may name a
saved panel in place of its agents (intake/json_cases.py); saving a panel and the shipped
examples are judgements/configuration/saving.py's.

Who sees what: a user uses their own panels and the examples; staff, and the command
line's operator (user None), every panel. A panel is named by its id or its name, the
user's own panels before the examples.
"""

from typing import TYPE_CHECKING, TypedDict

from django.contrib.auth.models import User
from django.db.models import Case, IntegerField, QuerySet, Value, When

from judgements.core import prompt_variants, text
from judgements.core.errors import InvalidInput
from judgements.models.certificates import agents_fingerprint
from judgements.models.choices import ID_MAX
from judgements.models.panels import Panel, StoredAgent
from judgements.outcome import panel_answers

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


def listing(user: User | None) -> list[panel_answers.Panel]:
    """The panels a user may use, as GET /api/panels/ lists them."""
    panels = visible(user).select_related("team").prefetch_related("reviewers", "certificates")
    return [panel_answers.Panel.from_record(panel) for panel in panels]


# --- a panel's prompt variants ------------------------------------------------------------

# How the setting is typed on a page or a command line: names joined with "+", NO_VARIANTS
# for an explicit empty set, nothing at all for "not set".
NO_VARIANTS = "none"
SEPARATOR = "+"


def site_default_variants() -> frozenset[prompt_variants.Variant]:
    """The variants of a judgement started without a saved panel, or from a panel that
    sets none: `prompt_variants.DEFAULT`, where the measured winner is named. The single
    point where intake reads the site's default."""
    return prompt_variants.resolve(None)


def variants_for(panel: Panel | None) -> frozenset[prompt_variants.Variant]:
    """The variants a judgement started from `panel` runs when its caller names none: the
    panel's own setting ([] included: no variant), or the site's default when it has none
    (None) or there is no saved panel. InvalidInput naming `panel` when a stored setting
    no longer parses (a variant removed since it was saved)."""
    if panel is None or panel.prompt_variants is None:
        return site_default_variants()
    try:
        return prompt_variants.parse(panel.prompt_variants)
    except ValueError as exc:
        raise InvalidInput(
            {"panel": [f"The panel's prompt_variants are no longer valid: {exc}."]}
        ) from None


def fingerprint_of(panel: Panel) -> str:
    """What a certificate of the panel holds for: its agents and their variants now."""
    return agents_fingerprint(panel.agents, variants_for(panel))


def checked_variants(value: object) -> list[str] | None:
    """A panel's setting as given (a list of variant names, or None: not set), unchanged
    when valid; ValueError saying what is wrong (an unknown name, a name twice, or
    named_peers with decisions_only)."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise ValueError("Must be a list of prompt variant names, or null (not set).")
    if len(set(value)) < len(value):
        raise ValueError("A prompt variant is named twice.")
    try:
        prompt_variants.parse(value)
    except ValueError as exc:
        message = str(exc)
        if message.startswith("unknown"):
            raise ValueError("U" + message[1:] + ".") from None
        raise ValueError(f"{message}: choose one.") from None
    return list(value)


def variants_from_text(typed: str) -> list[str] | None:
    """The setting as typed: "decision_first+quote", NO_VARIANTS ([]), or blank (None: not
    set); ValueError as checked_variants."""
    typed = typed.strip()
    if not typed:
        return None
    if typed.lower() == NO_VARIANTS:
        return []
    return checked_variants([name.strip() for name in typed.split(SEPARATOR)])


def named_variants(typed: str) -> list[str]:
    """A command line's --variants: as variants_from_text, but blank is no answer (leave
    the option out for the panel's own)."""
    named = variants_from_text(typed)
    if named is None:
        raise ValueError(f"Name the variants, joined with {SEPARATOR}, or {NO_VARIANTS}.")
    return named


def variants_text(setting: list[str] | None) -> str:
    """The setting as variants_from_text reads it back."""
    if setting is None:
        return ""
    return SEPARATOR.join(setting) or NO_VARIANTS
