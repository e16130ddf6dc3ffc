"""The page's forms of a case and its agents, and reading the JSON a client sent.

A case sent as JSON (the API, the command line, a panel's agents) is validated by its
pydantic face alone (intake/schemas.py); these form fields, the page's face of the same
case, ask the same rule functions with the same limits (core/text.py `text_problem`
through infrastructure/forms.py's TextField, text.comparable_name, the models the
deployment serves), so a case is valid or invalid in the same way wherever it comes
from. A saved panel's agents are these same forms (configuration/saving.py).
"""

import json
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict, cast

from django import forms

from judgements.core import rules, text
from judgements.core.errors import InvalidInput
from judgements.core.json_values import JsonValue
from judgements.infrastructure.forms import UTF16_BOMS, TextField
from judgements.intake import schemas
from judgements.intake.case import Case, CaseAgent
from judgements.llm import providers
from judgements.models.magi_settings import magi_settings
from judgements.models.panels import Panel, StoredAgent

AGENT_PREFIX = "agents"
# The limits are the schemas' (intake/schemas.py): the page counts as the API does.
AGENT_FIELDS = schemas.AGENT_FIELDS
TITLE_MAX_CHARS = schemas.TITLE_MAX_CHARS
NAME_MAX_CHARS = schemas.NAME_MAX_CHARS
CRITERIA_MAX_CHARS = schemas.CRITERIA_MAX_CHARS


HOLD_CHOICES = [
    ("", "As the saved panel or the deployment says"),
    ("yes", "Hold it until a person confirms or overrides it"),
    ("no", "Do not hold it: the panel's verdict is in force, marked contested"),
]
HOLD_VALUES = {"": None, "yes": True, "no": False}


def hold_choice(value: bool | None) -> str:
    """The form's choice for a stored hold_contested (None: as the defaults say)."""
    return {None: "", True: "yes", False: "no"}[value]


class JudgementForm(forms.Form):
    title = TextField(max_chars=TITLE_MAX_CHARS)
    hold_contested = forms.ChoiceField(
        choices=HOLD_CHOICES,
        required=False,
        label="If the verdict is contested",
        help_text="A contested verdict is one a person should look at (the panel split, "
        "changed its mind late, or gave a reason a check refuted).",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Built here so the operator's bound (and a test's override) applies at runtime.
        self.fields["content"] = TextField(
            max_chars=magi_settings.MAGI_CONTENT_MAX_CHARS,
            widget=forms.Textarea(attrs={"rows": 8}),
            help_text="The intended action or the text to be judged.",
        )


class AgentForm(forms.Form):
    name = TextField(max_chars=NAME_MAX_CHARS)
    model = forms.ChoiceField()
    criteria = TextField(max_chars=CRITERIA_MAX_CHARS, widget=forms.Textarea(attrs={"rows": 4}))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        models = providers.available_models()
        model_field = cast(forms.ChoiceField, self.fields["model"])
        model_field.choices = [(m, m) for m in models]
        self.fields["model"].error_messages["invalid_choice"] = (
            "Unknown model %(value)s. This deployment knows: "
            + (", ".join(models) or "no models; configure a provider")
            + "."
        )


# Unparameterised: Django's classes take no type arguments at run time (no django-stubs-ext).
class BaseAgentFormSet(forms.BaseFormSet):  # type: ignore[type-arg]  # see the line above
    def clean(self) -> None:
        # Checked even when another field is invalid, so every error shows at once. Names
        # compare as the database's constraint does (Agent.name_key): "Cas\u200bper" and
        # "CASPER" in full-width letters are both Casper.
        seen: set[str] = set()
        for form in self.forms:
            name = form.cleaned_data.get("name", "")
            if not name:
                continue
            key = text.comparable_name(name)
            if key in seen:
                form.add_error("name", f"Another agent is already called {name!r}.")
            seen.add(key)

    def agents(self) -> list[CaseAgent]:
        """The valid forms' agents, in order: what a case runs and a saved panel stores."""
        return [CaseAgent.of(form.cleaned_data) for form in self.forms]


AgentFormSet = forms.formset_factory(
    AgentForm,
    formset=BaseAgentFormSet,
    extra=0,
    min_num=rules.PANEL_SIZE,
    max_num=rules.PANEL_SIZE,
    validate_min=True,
    validate_max=True,
    absolute_max=rules.PANEL_SIZE,
)


class FormInitial(TypedDict, total=False):
    """What the page's forms are filled with (`bind`'s initial): a case as typed, run
    again or tried out."""

    title: str
    content: str
    hold_contested: str
    agents: list[StoredAgent]


def bind(
    data: Mapping[str, object] | None = None, initial: FormInitial | None = None
) -> tuple[JudgementForm, BaseAgentFormSet]:
    """The page's forms, bound to POST data or filled with initial values."""
    initial = initial or {}
    fields = ("title", "content", "hold_contested")
    form = JudgementForm(data, initial={k: initial.get(k, "") for k in fields})
    formset = AgentFormSet(data, prefix=AGENT_PREFIX, initial=initial.get("agents") or None)
    return form, cast(BaseAgentFormSet, formset)


def typed_case(data: Mapping[str, str]) -> FormInitial:
    """What the page's form holds, as it was typed, without validating it: to show the
    form again unchanged (after refreshing the model lists)."""
    return {
        "title": data.get("title", ""),
        "content": data.get("content", ""),
        "hold_contested": data.get("hold_contested", ""),
        "agents": [typed_agent(data, f"{AGENT_PREFIX}-{i}-") for i in range(rules.PANEL_SIZE)],
    }


def typed_agent(data: Mapping[str, str], prefix: str) -> StoredAgent:
    return StoredAgent(
        name=data.get(f"{prefix}name", ""),
        model=data.get(f"{prefix}model", ""),
        criteria=data.get(f"{prefix}criteria", ""),
    )


def posted_fields(case: FormInitial) -> dict[str, str]:
    """The page's POST fields holding a case as typed (`typed_case` read backwards):
    nothing is checked here, the forms bound to them check it."""
    fields = {key: case[key] for key in ("title", "content", "hold_contested") if key in case}
    return fields | agent_fields(case.get("agents", []))


def agent_fields(agents: Sequence[StoredAgent]) -> dict[str, str]:
    """The agent formset's fields holding `agents` as they are (a saved panel's, the
    page's): its forms bound to them check them."""
    fields: dict[str, str] = {}
    for index, agent in enumerate(agents):
        prefix = f"{AGENT_PREFIX}-{index}-"
        fields[f"{prefix}name"] = agent["name"]
        fields[f"{prefix}model"] = agent["model"]
        fields[f"{prefix}criteria"] = agent["criteria"]
    fields[f"{AGENT_PREFIX}-TOTAL_FORMS"] = str(len(agents))
    fields[f"{AGENT_PREFIX}-INITIAL_FORMS"] = "0"
    return fields


def parse_case_json(raw: bytes, source: str) -> JsonValue:
    """The JSON in raw bytes, or InvalidInput saying what is wrong with the input.

    JSON text is UTF-8 (RFC 8259); a UTF-8 byte order mark is tolerated.
    """
    if raw[:2] in UTF16_BOMS or b"\x00" in raw:
        # UTF-8 JSON never holds a NUL byte; UTF-16 and UTF-32 hold one in every ASCII char.
        raise InvalidInput(
            {
                "case": [
                    f"{source} is not UTF-8 text: it looks like UTF-16 or UTF-32; save it as UTF-8."
                ]
            }
        )
    try:
        decoded = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            {"case": [f"{source} is not UTF-8 text: byte {exc.start + 1} is invalid."]}
        ) from None
    try:
        parsed: JsonValue = json.loads(decoded)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            {"case": [f"{source} is not valid JSON: {exc.msg} at line {exc.lineno}."]}
        ) from None
    except RecursionError:
        raise InvalidInput({"case": [f"{source} nests arrays or objects too deeply."]}) from None
    except ValueError as exc:  # e.g. a number with more digits than Python converts
        raise InvalidInput({"case": [f"{source} cannot be read as JSON: {exc}."]}) from None
    return parsed


def agent_errors(formset: BaseAgentFormSet) -> dict[str, list[str]]:
    """The agent formset's errors under their JSON paths: `agents[1].model`, `agents`."""
    errors: dict[str, list[str]] = {}
    for index, agent_form in enumerate(formset.forms):
        for field, messages in agent_form.errors.items():
            errors[f"agents[{index}].{field}"] = [str(m) for m in messages]
    if formset.non_form_errors():
        errors["agents"] = [str(m) for m in formset.non_form_errors()]
    return errors


def cleaned_case(
    form: JudgementForm, formset: BaseAgentFormSet, panel: Panel | None = None
) -> Case:
    """The page's valid forms as a case; `panel`: the saved panel its agents came from."""
    return Case(
        title=form.cleaned_data["title"],
        content=form.cleaned_data["content"],
        agents=tuple(formset.agents()),
        hold_contested=HOLD_VALUES[form.cleaned_data.get("hold_contested") or ""],
        panel=panel,
    )


def form_initial(case: Case) -> FormInitial:
    """A case as the page's forms are filled from it (`bind`'s initial): "Run again"."""
    agents = [agent.stored() for agent in case.agents]
    return {"title": case.title, "content": case.content, "agents": agents}
