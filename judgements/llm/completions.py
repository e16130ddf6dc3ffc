"""What MAGI sends a chat-completions endpoint and how it reads the answer, as plain JSON:
the route (which endpoint and how to ask it), the body of a verdict's or a check's request,
and a reply's text, tokens and usage. No SDK and no Django here: calls.py sends these
bodies and hands the replies back to be read.
"""

import json
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal, NotRequired, TypedDict

from pydantic import ValidationError

from judgements.core import confidence, control_tokens, hidden_text, prompts
from judgements.core.json_values import JsonObject, JsonValue


@dataclass(frozen=True)
class ModelRoute:
    model: str
    provider: str
    base_url: str | None
    api_key: str | None
    structured_output: str
    timeout: float
    temperature: float
    seed: int | None
    max_tokens: int
    # Calls in flight at once to this provider (to each model, for a server MAGI starts);
    # None: no limit of ours.
    concurrency: int | None = None
    # For a provider MAGI runs itself: model -> its base URL, starting the server first.
    server: Callable[[str], Awaitable[str]] | None = None
    # An evaluation run's call: it yields its provider's slots to people's calls
    # (judgements/llm/call_slots.py).
    batch: bool = False
    # Ask for token log-probabilities, the agent's own confidence (core/confidence.py).
    logprobs: bool = True


class InvalidOutputError(Exception):
    """The reply arrived but is not a valid verdict; worth another attempt."""


class NamedSchema(TypedDict):
    """A schema under its name, as strict json_schema mode takes it."""

    name: str
    strict: bool
    schema: JsonValue


class JsonSchemaFormat(TypedDict):
    """OpenAI's structured output: the reply follows the schema, strictly."""

    type: Literal["json_schema"]
    json_schema: NamedSchema


class JsonObjectFormat(TypedDict):
    """llama.cpp's servers: a JSON object, the schema as its decoding grammar."""

    type: Literal["json_object"]
    schema: JsonObject


class ChatRequest(TypedDict):
    """The body of a chat-completions request as MAGI sends it (its keys in this order on
    the wire), and as the audit keeps it (LLMAttempt.request)."""

    model: str
    messages: list[dict[str, str]]
    max_tokens: int
    temperature: float
    seed: NotRequired[int]
    logprobs: NotRequired[bool]
    top_logprobs: NotRequired[int]
    response_format: NotRequired[JsonSchemaFormat | JsonObjectFormat]
    # llama.cpp's own field: an answer's grammar (structured output `llguidance`).
    grammar: NotRequired[str]


# The alternatives at each token: enough that both sides of a decision show (OpenAI allows
# up to 20; llama.cpp's server any number).
TOP_LOGPROBS = 5
# As a request asks for them (common_body); bench/engine_floor.py builds its bodies with it.
LOGPROBS = {"logprobs": True, "top_logprobs": TOP_LOGPROBS}


def without_logprobs(body: ChatRequest) -> ChatRequest:
    sent = body.copy()
    sent.pop("logprobs", None)
    sent.pop("top_logprobs", None)
    return sent


def sent_messages(messages: Sequence[dict[str, str]]) -> list[dict[str, str]]:
    """The messages as a model is sent them, the caller's left as they are. A server that
    parses the template's special tokens must not find any in what a user or a model
    wrote: they would end the fences (core/control_tokens.py). Nor may a model read what a
    person cannot: text hidden in invisible characters is withheld first
    (core/hidden_text.py), so no control token hidden there survives either."""
    return [
        {**message, "content": control_tokens.defused(hidden_text.withheld(message["content"]))}
        for message in messages
    ]


def common_body(route: ModelRoute, messages: list[dict[str, str]], max_tokens: int) -> ChatRequest:
    """What a verdict's and a check's requests share."""
    # Temperature 0 (the default) and a fixed seed make a verdict decisive and the same
    # judgement repeatable; without them the server's own sampling defaults apply.
    body: ChatRequest = {
        "model": route.model,
        "messages": sent_messages(messages),
        "max_tokens": max_tokens,
        "temperature": route.temperature,
    }
    if route.seed is not None:
        body["seed"] = route.seed
    if route.logprobs:
        body["logprobs"] = True
        body["top_logprobs"] = TOP_LOGPROBS
    return body


def request_body(
    route: ModelRoute,
    messages: list[dict[str, str]],
    variants: frozenset[prompts.Variant] = frozenset(),
) -> ChatRequest:
    """A verdict's request, its answer schema in the route's structured-output mode."""
    body = common_body(route, messages, route.max_tokens)
    # OpenAI's strict mode takes no `anyOf` of objects; a grammar can tie the decision to
    # `criterion_met`.
    tied = route.structured_output != "json_schema"
    schema = prompts.verdict_schema(tied=tied, variants=variants)
    return with_schema(body, route, "agent_verdict", schema)


def text_body(
    route: ModelRoute,
    messages: list[dict[str, str]],
    max_tokens: int | None = None,
    schema: JsonObject | None = None,
) -> ChatRequest:
    """A check's request (judgements/core/check_prompts.py): plain text, or JSON to `schema`
    in the route's structured-output mode."""
    body = common_body(route, messages, max_tokens or route.max_tokens)
    return body if schema is None else with_schema(body, route, "check", schema)


def with_schema(body: ChatRequest, route: ModelRoute, name: str, schema: JsonObject) -> ChatRequest:
    """`body` asking for JSON to `schema` the way the route's endpoint takes a schema
    (`prompt`: none, the prompt asks for it)."""
    if route.structured_output == "json_schema":
        strict = without_length_bounds(schema)
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": name, "strict": True, "schema": strict},
        }
    elif route.structured_output == "json_object":
        # llama.cpp's servers take any JSON schema inside json_object as a decoding grammar
        # (llama-cpp-python's answers HTTP 500 to json_schema).
        body["response_format"] = {"type": "json_object", "schema": schema}
    elif route.structured_output == "llguidance":
        body["grammar"] = llguidance_grammar(schema)
    return body


# The layout of the JSON a local model writes under MAGI's grammar (structured output
# `llguidance`, the models MAGI_LOCAL_FIXED_JSON names): one space after each colon and
# comma, as `json.dumps` writes it, and no other whitespace. The grammar llama.cpp builds
# from a schema lets a model put any whitespace between the tokens, and the bundled model
# spends 14 of an approval's 43 tokens on line breaks and indents (`"missing": [\n   \n
# ]`), each a step of the model; laid out, it writes 29 (docs/local-model.md).
FIXED_LAYOUT: JsonObject = {
    "whitespace_flexible": False,
    "item_separator": ", ",
    "key_separator": ": ",
}


def llguidance_grammar(schema: JsonObject) -> str:
    """`schema` as the grammar llama.cpp's server takes in a request's `grammar` field when
    it is built with llguidance (xllamacpp's is): the same JSON schema, its layout fixed."""
    return "%llguidance {}\nstart: %json " + json.dumps({**schema, "x-guidance": FIXED_LAYOUT})


# Keywords OpenAI's strict json_schema mode refuses on some models: a verdict's or a
# check's schema goes to that mode without them, the bound staying in our own validation.
LENGTH_KEYWORDS = frozenset({"minLength", "maxLength", "maxItems"})


def without_length_bounds(schema: JsonValue) -> JsonValue:
    """The schema with every length keyword removed, at any depth."""
    if isinstance(schema, dict):
        return {k: without_length_bounds(v) for k, v in schema.items() if k not in LENGTH_KEYWORDS}
    if isinstance(schema, list):
        return [without_length_bounds(item) for item in schema]
    return schema


# Greedy decoding repeats an invalid answer word for word, so the attempt after one samples
# instead: still seeded, so the same judgement stays repeatable.
RESAMPLE_TEMPERATURE = 0.7


def resampled(body: ChatRequest, attempt: int) -> ChatRequest:
    """The request again, sampled rather than greedy, with a seed of its own."""
    again = body | {"temperature": max(body.get("temperature", 0.0), RESAMPLE_TEMPERATURE)}
    if "seed" in body:
        again["seed"] = body["seed"] + attempt - 1
    return again


def token_count(value: JsonValue) -> int | None:
    """A token count of the reply's usage; None where it gives none."""
    return value if isinstance(value, int) else None


def cached_tokens(usage: JsonObject) -> int | None:
    """Prompt tokens served from the provider's prompt cache, where the provider reports
    them (OpenAI, vLLM and llama.cpp's server: `prompt_tokens_details.cached_tokens`)."""
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict):
        return token_count(details.get("cached_tokens"))
    return None


def first_choice(completion: JsonObject) -> JsonObject | None:
    """The reply's first choice, as the chat completion's JSON has it."""
    choices = completion.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    return choices[0]


def message_text(choice: JsonObject | None) -> str:
    message = (choice or {}).get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) else ""


def reply_tokens(completion: JsonObject) -> tuple[confidence.Token, ...] | None:
    """The reply's tokens with their listed alternatives, or None when the provider sent
    no log-probabilities (it does not support them, or was not asked)."""
    logprobs = (first_choice(completion) or {}).get("logprobs")
    if not isinstance(logprobs, dict) or not logprobs.get("content"):
        return None
    return tuple(token_of(item) for item in listed(logprobs["content"]))


def token_of(item: JsonValue) -> confidence.Token:
    """One token of the reply and the alternatives listed for its place."""
    text, logprob = scored(item)
    alternatives = item.get("top_logprobs") if isinstance(item, dict) else None
    return confidence.Token(
        text=text, logprob=logprob, alternatives=tuple(map(scored, listed(alternatives or [])))
    )


def scored(item: JsonValue) -> tuple[str, float]:
    """A token and its log-probability, as the reply lists them: a whole number made a
    float, as the SDK's models made it; no number (null: how llama.cpp's JSON writes
    -inf), no probability."""
    if not isinstance(item, dict) or not isinstance(text := item["token"], str):
        raise TypeError(f"not a token with its log-probability: {item!r}")
    logprob = item["logprob"]
    if isinstance(logprob, int | float) and not isinstance(logprob, bool):
        return text, float(logprob)
    return text, -math.inf


def listed(value: JsonValue) -> list[JsonValue]:
    if not isinstance(value, list):
        raise TypeError(f"not a list of tokens: {value!r}")
    return value


def parse_verdict(text: str | None) -> prompts.AgentVerdict:
    if not text or not text.strip():
        raise InvalidOutputError("empty reply")
    candidate = text.strip()
    # Servers without structured output may wrap the object in prose or a code fence.
    start, end = candidate.find("{"), candidate.rfind("}")
    if start != -1 and end > start:
        candidate = candidate[start : end + 1]
    try:
        return prompts.AgentVerdict.model_validate_json(candidate)
    except ValidationError as exc:
        if contradiction := contradiction_in(exc):
            raise InvalidOutputError(f"{contradiction}: {text[:200]!r}") from exc
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'reply'}: {err['msg']}"
            for err in exc.errors()
        )
        raise InvalidOutputError(f"invalid structured output ({problems}): {text[:200]!r}") from exc


def contradiction_in(exc: ValidationError) -> str | None:
    """The message of a well-formed answer whose criterion_met disagrees with its
    decision (an approve argued as a reject, or the reverse), or None."""
    for error in exc.errors():
        if error["type"] == prompts.CONTRADICTION:
            return f"contradictory answer ({error['msg']})"
    return None
