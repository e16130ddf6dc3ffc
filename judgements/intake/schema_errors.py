"""pydantic's validation errors as InvalidInput: the field paths (`agents[1].model`) and
the messages every entry point uses, and whether the input broke the schema (the API's
400) or only a rule the schema cannot express (RULE: the API's 422)."""

import re
from collections.abc import Sequence

from pydantic import BaseModel
from pydantic_core import ErrorDetails

from judgements.core import rules, text
from judgements.core.errors import InvalidInput

REQUIRED = "This field is required."
# The error type of a rule JSON Schema cannot express: the API answers 422 for it.
RULE = "magi_rule"


def whole(model: type[BaseModel] | None) -> tuple[str, str]:
    """Where an error about the whole body goes, and what a body that is not an object
    is told: a model's WHOLE, else a case's."""
    return getattr(model, "WHOLE", None) or (
        "case",
        "Must be a JSON object with title, content and agents.",
    )


# Where pydantic says an error is: field names and list indices, outermost first.
Location = tuple[int | str, ...]


def moved(error: ErrorDetails, location: Location) -> ErrorDetails:
    """The error at another location (under "agents", or out of ninja's "query")."""
    copied = error.copy()
    copied["loc"] = location
    return copied


def invalid_input(
    errors: Sequence[ErrorDetails],
    model: type[BaseModel] | None,
    agent_fields: tuple[str, ...],
    skip: int = 0,
) -> InvalidInput:
    """pydantic's errors as InvalidInput, under the paths and messages every entry point
    uses. `model`: what was validated (its fields are named when an unknown one is
    refused). `skip`: leading parts of each location that are not fields (ninja's "body")."""
    found: dict[str, list[str]] = {}
    for error in errors:
        for path, message in described(error, tuple(error["loc"])[skip:], model, agent_fields):
            found.setdefault(path, []).append(message)
    breaks_schema = any(error["type"] != RULE for error in errors)
    return InvalidInput(found, breaks_schema=breaks_schema)


def described(
    error: ErrorDetails, loc: Location, model: type[BaseModel] | None, agent_fields: tuple[str, ...]
) -> list[tuple[str, str]]:
    kind, ctx, message = error["type"], error.get("ctx") or {}, str(error["msg"])
    path = path_of(loc)
    if "fields" in ctx:
        # An error about fields below this one: each with its own message, or this one's.
        return [(joined(path, sub), own or message) for sub, own in ctx["fields"].items()]
    if kind == "extra_forbidden":
        # An unknown field inside an agent sits under an index: agents[2].Model.
        in_agent = len(loc) >= 2 and isinstance(loc[-2], int)
        known = agent_fields if in_agent or model is None else tuple(model.model_fields)
        field = text.escaped(str(loc[-1]))
        unknown = getattr(model, "UNKNOWN_FIELD", UNKNOWN_FIELD)
        return [(path_of(loc[:-1], field), unknown.format(known=", ".join(known)))]
    if own := model_message(model, path):
        return [(path, own)]
    if kind in ("too_short", "too_long", "agents_count") and path.split(".")[-1] == "agents":
        return [(path, f"Exactly {rules.PANEL_SIZE} agents are required, got {len_of(error)}.")]
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        if loc and isinstance(loc[-1], int):
            return [(path, "Must be an object with name, model and criteria.")]
        if not loc:
            return [whole(model)]
    return [(path or whole(model)[0], MESSAGES.get(kind, message))]


UNKNOWN_FIELD = "Unknown field; the fields here are {known}."


def model_message(model: type[BaseModel] | None, path: str) -> str | None:
    """What a model says of a field whatever pydantic found wrong with it (its MESSAGES),
    by path, or by the path with its indices blank: "expected_agents[]"."""
    messages = getattr(model, "MESSAGES", {})
    return messages.get(path) or messages.get(re.sub(r"\[\d+\]", "[]", path)) if path else None


def len_of(error: ErrorDetails) -> object:
    ctx = error.get("ctx") or {}
    return ctx.get("count", ctx.get("actual_length"))


MESSAGES = {
    "missing": REQUIRED,
    "string_too_short": REQUIRED,
    "too_short": REQUIRED,  # a text's min_length, checked before its own validators
    "string_type": "Must be a string.",
    "bool_type": "Must be true or false.",
    "int_type": "Must be an integer.",
    "list_type": f"Must be a list of exactly {rules.PANEL_SIZE} agents.",
}


def joined(path: str, sub: str) -> str:
    if not path or sub.startswith("["):
        return f"{path}{sub}"
    return f"{path}.{sub}"


def path_of(loc: Location, last: str | None = None) -> str:
    """("agents", 1, "model") -> "agents[1].model"."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    if last is not None:
        path += f".{last}" if path else last
    return path
