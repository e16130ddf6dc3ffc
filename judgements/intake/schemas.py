"""What a client sends, described once: a case's pydantic face, and its agents'.

A case is one type, intake/case.py `Case`; `CaseJson` is how it reads as JSON: the HTTP
API validates its bodies with it (django-ninja) and documents them from it in
/api/schema.json, the command line a case file and the MCP tools their arguments
(`validated`), and `CaseJson.case()` hands on the `Case`. The page's form fields ask the
same rule functions (core/text.py `text_problem`, the same limits and the same name
comparison).

Two kinds of refusal, told apart by the API's status: a body that breaks the schema (a
wrong type, an unknown field, an empty or too long text, the wrong number of agents, a
model the deployment does not serve) answers 400; a body the schema allows but a rule it
cannot express refuses (only invisible characters, a lone surrogate, two agents with one
name once compared as names are) answers 422. Both name the field path, as `errors`
below does: `agents[1].model`.
"""

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Any, TypeVar

from annotated_types import GroupedMetadata
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic.config import JsonDict, JsonValue
from pydantic_core import ErrorDetails, PydanticCustomError

from judgements.core import rules, text
from judgements.core.errors import InvalidInput
from judgements.intake import schema_errors
from judgements.intake.case import Case, CaseAgent
from judgements.llm import providers
from judgements.models.magi_settings import magi_settings
from judgements.outcome.webhooks import URL_MAX_CHARS
from judgements.panels.saved_panels import NOT_A_REFERENCE
from magi_client.canonical import stored_content

TITLE_MAX_CHARS = 200
NAME_MAX_CHARS = 100
CRITERIA_MAX_CHARS = 5_000
REQUIRED = schema_errors.REQUIRED
RULE = schema_errors.RULE

BOTH_GIVEN = 'Give either "agents" or "panel", not both.'
NEITHER_GIVEN = (
    f'Give "agents" (a list of {rules.PANEL_SIZE} agents) or "panel" (a saved panel\'s name or id).'
)


# An error's context naming the fields it is about, each with its own message or None
# (the error's): schema_errors.described reads it. A plain dict, as pydantic's context is.
FieldsContext = dict[str, Mapping[str, str | None]]


def both_fields(*names: str) -> FieldsContext:
    """The context of an error about fields together: each named gets the message."""
    return {"fields": dict.fromkeys(names)}


def rule_error(message: str, fields: Mapping[str, str | None] | None = None) -> PydanticCustomError:
    """An error of a rule the schema cannot express (the API's 422), about `fields` when
    given (each with its own message, or None: this one)."""
    context: FieldsContext | None = None if fields is None else {"fields": fields}
    return PydanticCustomError(RULE, message, context)


class Strict(BaseModel):
    """Strict types (no "1" for 1) and no unknown fields: a client's typo never passes."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def unprintable_fields(cls, data: object) -> object:
        # pydantic cannot even name a field whose name holds a lone surrogate; it is as
        # unknown as any other, named with the surrogate escaped.
        if isinstance(data, dict):
            known = ", ".join(cls.model_fields)
            unknown = {
                text.escaped(key): f"Unknown field; the fields here are {known}."
                for key in data
                if isinstance(key, str) and text.first_surrogate(key) is not None
            }
            if unknown:
                raise PydanticCustomError("extra_forbidden", "Unknown field.", {"fields": unknown})
        return data


# --- typed text --------------------------------------------------------------------------


@dataclass(frozen=True)
class TypedText(GroupedMetadata):
    """A text a person types, checked as the page checks it (Django's CharField): white
    space around it dropped, then a visible character required, no lone surrogate, no NUL,
    at most `max_chars()` characters as the page's counter counts them (a line break one).
    `Annotated[str, TypedText(...)]`: pydantic unpacks the validators below."""

    max_chars: Callable[[], int]
    description: str
    required: bool = True

    def __iter__(self) -> Iterator[object]:
        yield BeforeValidator(self.before)
        least = 1 if self.required else 0
        yield Field(min_length=least, description=self.description, json_schema_extra=self.document)
        yield AfterValidator(self.after)

    def before(self, value: object) -> object:
        # pydantic refuses a lone surrogate as not a string at all; it is one, and the
        # message says where it is.
        if isinstance(value, str) and text.first_surrogate(stored_content(value)) is not None:
            problem = text.text_problem(stored_content(value), self.max_chars())
            raise rule_error(problem[1] if problem else "Holds a lone UTF-16 surrogate.")
        return value

    def after(self, value: str) -> str:
        value = stored_content(value)
        if not value:
            if not self.required:
                return value
            raise rule_error(REQUIRED)
        if (problem := text.text_problem(value, self.max_chars())) is not None:
            code, message = problem
            raise PydanticCustomError("string_too_long" if code == "max_length" else RULE, message)
        if "\x00" in value:
            raise rule_error("Null characters are not allowed.")
        return value

    def document(self, schema: JsonDict) -> None:
        schema["maxLength"] = self.max_chars()


def content_max_chars() -> int:
    # Read when a case is checked: the operator's bound (and a test's override) applies.
    return int(magi_settings.MAGI_CONTENT_MAX_CHARS)


Title = Annotated[str, TypedText(lambda: TITLE_MAX_CHARS, "What the case is about.")]
Content = Annotated[
    str,
    TypedText(
        content_max_chars,
        "The intended action or the text to be judged (MAGI_CONTENT_MAX_CHARS; a line break "
        "counts as one character).",
    ),
]
AgentName = Annotated[
    str, TypedText(lambda: NAME_MAX_CHARS, "Unique in the panel, compared ignoring case.")
]
Criteria = Annotated[
    str, TypedText(lambda: CRITERIA_MAX_CHARS, "What this agent approves and rejects.")
]


# --- models ------------------------------------------------------------------------------

# The key of a validation context's list of the models allowed instead of the deployment's.
ALLOWED_MODELS = "allowed_models"


def unknown_model(value: str, info: ValidationInfo) -> str:
    # A validation's context may name the models allowed in place of the deployment's
    # (the shipped example panels run on the bundled model: configuration/saving.py).
    allowed = info.context.get(ALLOWED_MODELS) if isinstance(info.context, dict) else None
    models = providers.available_models() if allowed is None else list(allowed)
    if value not in models:
        raise PydanticCustomError(
            "enum",
            "Unknown model {value}. This deployment knows: {known}.",
            {"value": value, "known": ", ".join(models) or "no models; configure a provider"},
        )
    return value


def no_surrogate_in_model(value: object) -> object:
    # The model is a choice, not free text; the "unknown model" message would repeat the
    # value, which a terminal cannot print.
    if isinstance(value, str) and text.first_surrogate(value) is not None:
        raise PydanticCustomError("enum", "Holds a lone UTF-16 surrogate: not a model name.")
    return value


def document_models(schema: JsonDict) -> None:
    # Read when the schema is served: the models the deployment serves now.
    models: list[JsonValue] = list(providers.available_models())
    if models:
        schema["enum"] = models


ModelName = Annotated[
    str,
    BeforeValidator(no_surrogate_in_model),
    Field(
        min_length=1,
        description="One of the models this deployment serves (the enum, read when this "
        "document was served).",
        json_schema_extra=document_models,
    ),
    AfterValidator(unknown_model),
]


class Agent(Strict):
    name: AgentName
    model: ModelName
    criteria: Criteria

    def case_agent(self) -> CaseAgent:
        """The agent as a case holds it, typed (intake/case.py)."""
        return CaseAgent(name=self.name, model=self.model, criteria=self.criteria)


def distinct_names(agents: list[Agent]) -> list[Agent]:
    """Names compare as the database's constraint compares them (text.comparable_name):
    "Cas\u200bper" and "CASPER" in full-width letters are both Casper."""
    seen: set[str] = set()
    clashes = {}
    for index, agent in enumerate(agents):
        key = text.comparable_name(agent.name)
        if key in seen:
            clashes[f"[{index}].name"] = f"Another agent is already called {agent.name!r}."
        seen.add(key)
    if clashes:
        raise rule_error("Two agents share a name.", fields=clashes)
    return agents


def three_first(value: object) -> object:
    # The count before the agents themselves: with two agents, that is the one error.
    if isinstance(value, list) and len(value) != rules.PANEL_SIZE:
        raise PydanticCustomError(
            "agents_count",
            "Exactly {size} agents are required, got {count}.",
            {"size": rules.PANEL_SIZE, "count": len(value)},
        )
    return value


Agents = Annotated[
    list[Agent],
    BeforeValidator(three_first),
    Field(min_length=rules.PANEL_SIZE, max_length=rules.PANEL_SIZE),
    AfterValidator(distinct_names),
]


def whole_number(value: object) -> object:
    """JSON Schema's integer: 2.0 is one (a number without a fraction); true is not."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def reference(message: str) -> BeforeValidator:
    """A name (a string) or an id (an integer), else `message`."""

    def check(value: object) -> object:
        value = whole_number(value)
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise PydanticCustomError("reference_type", message)
        return value

    return BeforeValidator(check)


PanelReference = Annotated[
    StrictStr | StrictInt,
    reference(NOT_A_REFERENCE),
    Field(description="A saved panel's name or id (GET /api/panels/), in place of agents."),
]


def not_documented_default(schema: JsonDict) -> None:
    # An optional field that takes no null: its absent default is not a value to send.
    schema.pop("default", None)


def optional(description: str | None = None) -> Any:
    # Any, as pydantic's Field is: the default of whatever field it is the default of.
    return Field(default=None, json_schema_extra=not_documented_default, description=description)


def agents_or_panel(schema: JsonDict) -> None:
    schema["oneOf"] = [{"required": ["agents"]}, {"required": ["panel"]}]


class CaseJson(Strict):
    """A case to judge as JSON brings it: its agents, or a saved panel to copy them from.
    Its pydantic face only: `case()` is the Case (intake/case.py) every way in submits."""

    model_config = ConfigDict(json_schema_extra=agents_or_panel)

    title: Title
    content: Content
    agents: Agents = optional()
    panel: PanelReference = optional()
    hold_contested: bool | None = Field(
        default=None,
        description='Hold a contested verdict for a person: status is "held" until a '
        "reviewer confirms or overrides it. Absent or null: the saved panel's choice, else "
        "the deployment's MAGI_HOLD_CONTESTED.",
    )

    @model_validator(mode="after")
    def agents_or_panel(self) -> "CaseJson":
        given = self.model_fields_set
        if "agents" in given and "panel" in given:
            raise PydanticCustomError("one_of", BOTH_GIVEN, both_fields("panel", "agents"))
        if "agents" not in given and "panel" not in given:
            raise PydanticCustomError("one_of", NEITHER_GIVEN, both_fields("agents"))
        return self

    def case(self) -> Case:
        """The case, its saved panel named and not yet looked up: submit's step 3 does
        that for its caller (intake/json_cases.py `resolve_case`)."""
        return Case(
            title=self.title,
            content=self.content,
            agents=tuple(agent.case_agent() for agent in self.agents or ()),
            hold_contested=self.hold_contested,
            panel_named=self.panel,
        )


# --- errors ------------------------------------------------------------------------------

AGENT_FIELDS = tuple(Agent.model_fields)
M = TypeVar("M", bound=BaseModel)


def validated(model: type[M], data: object) -> M:
    """`data` as `model`, or InvalidInput naming each field path (breaks_schema says
    whether the data breaks the schema, or only a rule it cannot express)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise invalid_input(exc.errors(include_url=False), model) from None


AGENTS = TypeAdapter(Agents)


def validated_agents(agents: object, models: Sequence[str] | None = None) -> tuple[CaseAgent, ...]:
    """Three agents checked as a case's are (a saved panel's again, a panel's JSON),
    errors under `agents[1].model`. `models`: the models allowed in place of the
    deployment's (the shipped examples: the bundled one)."""
    context = None if models is None else {ALLOWED_MODELS: list(models)}
    try:
        valid = AGENTS.validate_python(agents, context=context)
        return tuple(agent.case_agent() for agent in valid)
    except ValidationError as exc:
        found = exc.errors(include_url=False)
        errors = [schema_errors.moved(e, ("agents", *e["loc"])) for e in found]
        raise invalid_input(errors, None) from None


def invalid_input(
    errors: Sequence[ErrorDetails], model: type[BaseModel] | None, skip: int = 0
) -> InvalidInput:
    return schema_errors.invalid_input(errors, model, AGENT_FIELDS, skip)


class CaseWithCallback(CaseJson):
    """The API's case: a case, and where to send a signed webhook when it ends."""

    callback_url: Annotated[
        str,
        Field(
            min_length=1,
            max_length=URL_MAX_CHARS,
            description="Where to POST a signed webhook when the judgement ends or is "
            "reviewed. Its host must be on the deployment's MAGI_WEBHOOK_HOSTS (https, "
            "unless listed as http://host) and the caller needs a webhook secret "
            "(`manage.py webhook_secret USER`); otherwise 422 naming callback_url.",
        ),
    ] = optional()

    def case(self) -> Case:
        """The case with its callback URL, checked in submit's step 3 for its caller."""
        return replace(super().case(), callback_url=self.callback_url)
