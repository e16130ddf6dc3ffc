"""Input validation shared by the page, the command line and the HTTP API.

Every entry point turns its input into these forms, so a case is valid or invalid in
exactly the same way wherever it comes from.
"""

from django import forms
from django.conf import settings

from judgements import llm, rules

AGENT_PREFIX = "agents"
TITLE_MAX_CHARS = 200
NAME_MAX_CHARS = 100
CRITERIA_MAX_CHARS = 5_000


class JudgementForm(forms.Form):
    title = forms.CharField(max_length=TITLE_MAX_CHARS)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # Built here so the operator's bound (and a test's override) applies at runtime.
        self.fields["content"] = forms.CharField(
            max_length=settings.MAGI_CONTENT_MAX_CHARS,
            widget=forms.Textarea(attrs={"rows": 8}),
            help_text="The intended action or the text to be judged.",
        )


class AgentForm(forms.Form):
    name = forms.CharField(max_length=NAME_MAX_CHARS)
    model = forms.ChoiceField()
    criteria = forms.CharField(
        max_length=CRITERIA_MAX_CHARS, widget=forms.Textarea(attrs={"rows": 4})
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        models = llm.available_models()
        self.fields["model"].choices = [(m, m) for m in models]
        self.fields["model"].error_messages["invalid_choice"] = (
            "Unknown model %(value)s. This deployment knows: "
            + (", ".join(models) or "no models; configure a provider")
            + "."
        )


class BaseAgentFormSet(forms.BaseFormSet):
    def clean(self) -> None:
        # Checked even when another field is invalid, so every error shows at once.
        seen: set[str] = set()
        for form in self.forms:
            name = form.cleaned_data.get("name", "")
            key = name.casefold()
            if not name:
                continue
            if key in seen:
                form.add_error("name", f"Another agent is already called {name!r}.")
            seen.add(key)


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


def bind(data=None, initial: dict | None = None) -> tuple[JudgementForm, BaseAgentFormSet]:
    """The page's forms, bound to POST data or filled with initial values."""
    initial = initial or {}
    form = JudgementForm(data, initial={k: initial.get(k, "") for k in ("title", "content")})
    formset = AgentFormSet(data, prefix=AGENT_PREFIX, initial=initial.get("agents") or None)
    return form, formset


def is_valid(form: JudgementForm, formset: BaseAgentFormSet) -> bool:
    # Both must run so every error shows at once.
    return all([form.is_valid(), formset.is_valid()])


class CaseError(ValueError):
    """An invalid case from the command line or the API, field name -> messages."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{f}: {' '.join(m)}" for f, m in errors.items()))


def case_to_form_data(case) -> dict[str, str]:
    """Turn a JSON case into form data, rejecting what has the wrong shape."""
    if not isinstance(case, dict):
        raise CaseError({"case": ["Must be a JSON object with title, content and agents."]})
    errors: dict[str, list[str]] = {}
    data: dict[str, str] = {}
    for field in ("title", "content"):
        value = case.get(field, "")
        if not isinstance(value, str):
            errors[field] = ["Must be a string."]
        data[field] = value if isinstance(value, str) else ""
    agents = case.get("agents")
    if not isinstance(agents, list):
        errors["agents"] = [f"Must be a list of exactly {rules.PANEL_SIZE} agents."]
        agents = []
    elif len(agents) != rules.PANEL_SIZE:
        errors["agents"] = [f"Exactly {rules.PANEL_SIZE} agents are required, got {len(agents)}."]
    for index, agent in enumerate(agents[: rules.PANEL_SIZE]):
        if not isinstance(agent, dict):
            errors[f"agents[{index}]"] = ["Must be an object with name, model and criteria."]
            continue
        for field in ("name", "model", "criteria"):
            value = agent.get(field, "")
            if not isinstance(value, str):
                errors[f"agents[{index}].{field}"] = ["Must be a string."]
                value = ""
            data[f"{AGENT_PREFIX}-{index}-{field}"] = value
    if errors:
        raise CaseError(errors)
    data[f"{AGENT_PREFIX}-TOTAL_FORMS"] = str(len(agents))
    data[f"{AGENT_PREFIX}-INITIAL_FORMS"] = "0"
    return data


def form_errors(form: JudgementForm, formset: BaseAgentFormSet) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    for field, messages in form.errors.items():
        errors["case" if field == "__all__" else field] = list(messages)
    for index, agent_errors in enumerate(formset.errors):
        for field, messages in agent_errors.items():
            errors[f"agents[{index}].{field}"] = list(messages)
    if formset.non_form_errors():
        errors["agents"] = list(formset.non_form_errors())
    return errors


def validate_case(case) -> dict:
    """Validate a JSON case; return cleaned {title, content, agents} or raise CaseError."""
    form, formset = bind(case_to_form_data(case))
    if not is_valid(form, formset):
        raise CaseError(form_errors(form, formset))
    return cleaned_case(form, formset)


def cleaned_case(form: JudgementForm, formset: BaseAgentFormSet) -> dict:
    return {
        "title": form.cleaned_data["title"],
        "content": form.cleaned_data["content"],
        "agents": [dict(agent_form.cleaned_data) for agent_form in formset.forms],
    }
