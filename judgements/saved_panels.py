"""Saved panels: three agents under a name, to start judgements from.

A panel's agents are validated exactly as a judgement's are (forms.AgentFormSet) and
stored as JSON. A judgement started from a panel copies them into its own Agent rows and
records the panel (Judgement.panel), so editing the panel later changes no judgement.
Example panels have no owner; they ship as JSON files in judgements/examples/panels/ and
`manage.py load_examples` creates them (ensure_examples).

Who sees what: a user uses their own panels and the examples; staff, and the command
line's operator (user None), every panel. A panel is named by its id or its name, the
user's own panels before the examples.
"""

import json
from pathlib import Path

from django import forms as django_forms
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Case, IntegerField, QuerySet, Value, When
from django.utils import timezone

from judgements import forms, rules, text
from judgements.forms import CaseError
from judgements.local_llm import BUNDLED_MODEL_NAME
from judgements.models import Panel

EXAMPLES_DIR = Path(__file__).resolve().parent / "examples" / "panels"
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


class PanelError(ValueError):
    """An unknown panel or an invalid one, field name -> messages."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{f}: {' '.join(m)}" for f, m in errors.items()))


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
        raise PanelError({"panel": [NOT_A_REFERENCE]})
    panels = visible(user)
    if isinstance(reference, int):
        found = by_id(panels, reference)
    else:
        found = by_name(panels, reference)
        if found is None and is_decimal_id(reference):
            found = by_id(panels, int(reference))
    if found is None:
        shown = reference if isinstance(reference, int) else repr(text.escaped(reference))
        raise PanelError({"panel": [f"No panel {shown} that you may use."]})
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
        raise PanelError(
            {"panel": [f"{len(matches)} users have a panel called {name!r}: give its id."]}
        )
    return first


def agents_of(panel: Panel) -> list[dict]:
    """The panel's agents, in the shape a case's "agents" takes."""
    return [{field: agent[field] for field in forms.AGENT_FIELDS} for agent in panel.agents]


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
    "panel"; a case without "panel" comes back as it is. CaseError names "panel" (unknown,
    or not the user's to use) or "panel" and "agents" (both given)."""
    if not isinstance(case, dict) or "panel" not in case:
        return case
    if "agents" in case:
        raise CaseError({"panel": [BOTH_GIVEN], "agents": [BOTH_GIVEN]})
    try:
        panel = resolve(case["panel"], user)
    except PanelError as exc:
        raise CaseError(exc.errors) from None
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
    except CaseError as exc:
        exc.errors.update(hold_errors)
        raise
    if hold_errors:
        raise CaseError(hold_errors)
    return {**cleaned, HOLD_FIELD: hold}


def validate_panel_case(case, user, also_known: tuple[str, ...] = ()) -> dict:
    """forms.validate_case for a case that may name a saved panel in place of its agents.

    The cleaned case carries the Panel (or None) under "panel", which
    Judgement.create_with_agents records. Every error shows at once: a wrong panel and
    a blank title are both reported. A panel's agents are validated like typed ones: a
    model this deployment no longer serves is reported as `panel.agents[0].model`.
    """
    if not isinstance(case, dict) or ("panel" not in case and "agents" in case):
        return {**forms.validate_case(case, ("panel", *also_known)), "panel": None}
    errors: dict[str, list[str]] = {}
    panel = None
    rest = {key: value for key, value in case.items() if key != "panel"}
    if "panel" not in case:
        errors["agents"] = [NEITHER_GIVEN]
    else:
        try:
            rest = expand_panel(case, user)
        except CaseError as exc:
            errors.update(exc.errors)
        else:
            panel = rest.pop("panel")
    if errors:
        # Stand-in agents, whose own errors are dropped below, so the title's and the
        # content's are still found.
        rest["agents"] = [dict.fromkeys(forms.AGENT_FIELDS, "")] * rules.PANEL_SIZE
    try:
        cleaned = forms.validate_case(rest, ("panel", *also_known))
    except CaseError as exc:
        for field, messages in exc.errors.items():
            if is_agents_field(field):
                if errors:
                    continue  # missing because of the panel error above
                field = f"panel.{field}"
            errors[field] = messages
    if errors:
        raise CaseError(errors)
    return {**cleaned, "panel": panel}


def is_agents_field(field: str) -> bool:
    return field == "agents" or field.startswith("agents[")


# Saving a panel: the page's forms, and JSON (the shipped examples).


class PanelForm(django_forms.Form):
    """A panel's name and description; its agents are a forms.AgentFormSet beside it."""

    name = forms.TextField(max_chars=NAME_MAX_CHARS)
    description = forms.TextField(
        max_chars=DESCRIPTION_MAX_CHARS,
        required=False,
        widget=django_forms.Textarea(attrs={"rows": 2}),
        help_text="Optional: what the panel judges.",
    )
    hold_contested = django_forms.ChoiceField(
        choices=[
            ("", "As the deployment says"),
            ("yes", "Hold them until a person confirms or overrides them"),
            ("no", "Do not hold them: the panel's verdict is in force, marked contested"),
        ],
        required=False,
        label="Contested verdicts of judgements started from this panel",
    )

    def __init__(self, *args, owner=None, panel: Panel | None = None, **kwargs) -> None:
        """owner: whose panels the name must differ from (None: the examples); panel:
        the one being edited, whose own name is no clash."""
        super().__init__(*args, **kwargs)
        self.owner = owner
        self.panel = panel

    def clean_name(self) -> str:
        name = self.cleaned_data["name"]
        if name_taken(name, self.owner, self.panel):
            whose = "An example panel" if self.owner is None else "A panel of the same owner"
            raise ValidationError(f"{whose} is already called {name!r}.", code="unique")
        return name


def name_taken(name: str, owner, panel: Panel | None = None) -> bool:
    """Names clash as agent names do: "Deploy gate" and "deploy  GATE" are one name."""
    key = text.comparable_name(name)
    same_owner = Panel.objects.filter(owner=owner)  # owner None: the examples
    if panel is not None:
        same_owner = same_owner.exclude(pk=panel.pk)
    names = same_owner.values_list("name", flat=True)
    return any(text.comparable_name(other) == key for other in names)


def agents_formset(data=None, agents: list[dict] | None = None) -> forms.BaseAgentFormSet:
    """The three agent forms bound to posted data, or to a panel's agents: bound, so a
    stored agent this deployment can no longer run (its model gone) shows its error as
    soon as the form does, instead of the page quietly selecting another model."""
    if agents is not None:
        data = agent_form_data(agents)
    return forms.AgentFormSet(data, prefix=forms.AGENT_PREFIX)


def agent_form_data(agents) -> dict[str, str]:
    """Form data for agents given as JSON, refused (CaseError, `agents[1].model`) when it
    has the wrong shape, exactly as a case's agents are."""
    data = forms.case_to_form_data({"title": "", "content": "", "agents": agents})
    return {key: value for key, value in data.items() if key not in ("title", "content")}


def errors_of(panel_form: PanelForm, formset) -> dict[str, list[str]]:
    errors = {field: list(messages) for field, messages in panel_form.errors.items()}
    return errors | forms.agent_errors(formset)


def store(panel_form: PanelForm, formset, panel: Panel | None = None) -> Panel:
    """Save validated forms as a new panel of panel_form.owner, or over `panel`."""
    agents = [dict(agent_form.cleaned_data) for agent_form in formset.forms]
    fields = {
        "name": panel_form.cleaned_data["name"],
        "description": panel_form.cleaned_data["description"],
        "hold_contested": forms.HOLD_VALUES[panel_form.cleaned_data.get("hold_contested") or ""],
        "agents": agents,
    }
    try:
        with transaction.atomic():
            if panel is None:
                return Panel.objects.create(owner=panel_form.owner, **fields)
            Panel.objects.filter(pk=panel.pk).update(**fields, updated_at=timezone.now())
    except IntegrityError:
        # Another request took the name between the check and the write.
        raise PanelError({"name": [f"A panel is already called {fields['name']!r}."]}) from None
    panel.refresh_from_db()
    return panel


def save_panel(*, owner, name, description="", agents, models: list[str] | None = None) -> Panel:
    """Validate a panel given as JSON and store it as a new panel of `owner`; PanelError
    names each invalid field (`name`, `agents[2].criteria`). `models`, when given, are the
    models allowed instead of the deployment's (the shipped examples: the bundled one)."""
    panel_form, formset = bind_json(owner, None, name, description, agents, models)
    return store(panel_form, formset)


def update_panel(panel: Panel, *, name, description="", agents) -> Panel:
    """Validate and store new values over an existing panel; PanelError as save_panel."""
    panel_form, formset = bind_json(panel.owner, panel, name, description, agents, None)
    return store(panel_form, formset, panel)


def bind_json(owner, panel, name, description, agents, models) -> tuple[PanelForm, object]:
    errors: dict[str, list[str]] = {}
    for field, value in (("name", name), ("description", description)):
        if not isinstance(value, str):
            errors[field] = ["Must be a string."]
    try:
        data = agent_form_data(agents)
    except CaseError as exc:
        errors.update(exc.errors)
        data = {}
    if errors:
        raise PanelError(errors)
    panel_form = PanelForm({"name": name, "description": description}, owner=owner, panel=panel)
    formset = agents_formset(data)
    if models is not None:
        for agent_form in formset.forms:
            agent_form.fields["model"].choices = [(model, model) for model in models]
    if not forms.is_valid(panel_form, formset):
        raise PanelError(errors_of(panel_form, formset))
    return panel_form, formset


# The shipped examples.


def ensure_examples(directory: Path = EXAMPLES_DIR) -> None:
    """Create every example panel of judgements/examples/panels/ that does not exist yet
    (by name). Existing ones are left as they are, edits by staff included. Their agents
    run on the bundled model, so a new installation can judge with one click."""
    for path in sorted(directory.glob("*.json")):
        spec = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(spec, dict):
            raise PanelError({path.name: ['Must be an object: {"name", "description", "agents"}.']})
        unknown = sorted(set(spec) - set(EXAMPLE_FIELDS))
        if unknown:
            raise PanelError({f"{path.name}: {field}": ["Unknown field."] for field in unknown})
        name = spec.get("name")
        if isinstance(name, str) and name_taken(name, None):
            continue
        try:
            save_panel(
                owner=None,
                name=name,
                description=spec.get("description", ""),
                agents=spec.get("agents"),
                models=[BUNDLED_MODEL_NAME],
            )
        except PanelError as exc:
            if isinstance(name, str) and name_taken(name, None):
                continue  # another process created it meanwhile
            raise PanelError({f"{path.name}: {f}": m for f, m in exc.errors.items()}) from None


# The new-judgement page's choice of a panel to start from.


class ChoosePanelForm(django_forms.Form):
    start_panel = django_forms.ModelChoiceField(
        queryset=Panel.objects.none(),
        empty_label="Choose a panel…",
        error_messages={
            "required": "Choose a panel to start from.",
            "invalid_choice": "That panel is not there any more, or is not yours to use.",
        },
    )

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["start_panel"]
        field.queryset = visible(user)
        field.label_from_instance = lambda panel: label(panel, user)


def label(panel: Panel, user) -> str:
    if panel.owner_id is None:
        return f"{panel.name} (example)"
    if user is not None and panel.owner_id == user.pk:
        return panel.name
    return f"{panel.name} ({panel.owner.get_username()})"
