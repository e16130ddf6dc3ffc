"""What MAGI sends a chat-completions endpoint and how it reads the answer, as plain JSON:
the route (which endpoint and how to ask it), the body of a verdict's or a check's request,
and a reply's text, tokens and usage. No SDK and no Django here: calls.py sends these
bodies and hands the replies back to be read.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from judgements.core import confidence, prompts


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


# The alternatives at each token: enough that both sides of a decision show (OpenAI allows
# up to 20; llama.cpp's server any number).
TOP_LOGPROBS = 5
LOGPROBS = {"logprobs": True, "top_logprobs": TOP_LOGPROBS}


def without_logprobs(body: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if key not in LOGPROBS}


def common_body(
    route: ModelRoute, messages: list[dict[str, str]], max_tokens: int
) -> dict[str, Any]:
    """What a verdict's and a check's requests share."""
    # Temperature 0 (the default) and a fixed seed make a verdict decisive and the same
    # judgement repeatable; without them the server's own sampling defaults apply.
    body: dict[str, Any] = {
        "model": route.model,
        "messages": messages,
        "max_tokens": max_tokens,
        "temperature": route.temperature,
    }
    if route.seed is not None:
        body["seed"] = route.seed
    if route.logprobs:
        body |= LOGPROBS
    return body


def request_body(
    route: ModelRoute,
    messages: list[dict[str, str]],
    variants: frozenset[prompts.Variant] = frozenset(),
) -> dict[str, Any]:
    """A verdict's request, its answer schema in the route's structured-output mode."""
    body = common_body(route, messages, route.max_tokens)
    if route.structured_output == "json_schema":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": "agent_verdict",
                "strict": True,
                "schema": without_length_bounds(prompts.verdict_schema(variants=variants)),
            },
        }
    elif route.structured_output == "json_object":
        # llama.cpp's servers take any JSON schema inside json_object as a decoding grammar
        # (llama-cpp-python's answers HTTP 500 to json_schema).
        body["response_format"] = {
            "type": "json_object",
            "schema": prompts.verdict_schema(tied=True, variants=variants),
        }
    return body


def text_body(
    route: ModelRoute,
    messages: list[dict[str, str]],
    max_tokens: int | None = None,
    schema: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A check's request (judgements/core/check_prompts.py): plain text, or JSON to `schema`
    in the route's structured-output mode."""
    body = common_body(route, messages, max_tokens or route.max_tokens)
    if schema is not None:
        if route.structured_output == "json_schema":
            strict = without_length_bounds(schema)
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "check", "strict": True, "schema": strict},
            }
        elif route.structured_output == "json_object":
            body["response_format"] = {"type": "json_object", "schema": schema}
    return body


# Keywords OpenAI's strict json_schema mode refuses on some models: a verdict's or a
# check's schema goes to that mode without them, the bound staying in our own validation.
LENGTH_KEYWORDS = frozenset({"minLength", "maxLength", "maxItems"})


def without_length_bounds(schema: Any) -> Any:
    """The schema with every length keyword removed, at any depth."""
    if isinstance(schema, dict):
        return {k: without_length_bounds(v) for k, v in schema.items() if k not in LENGTH_KEYWORDS}
    if isinstance(schema, list):
        return [without_length_bounds(item) for item in schema]
    return schema


# Greedy decoding repeats an invalid answer word for word, so the attempt after one samples
# instead: still seeded, so the same judgement stays repeatable.
RESAMPLE_TEMPERATURE = 0.7


def resampled(body: dict[str, Any], attempt: int) -> dict[str, Any]:
    """The request again, sampled rather than greedy, with a seed of its own."""
    again = body | {"temperature": max(body.get("temperature", 0.0), RESAMPLE_TEMPERATURE)}
    if "seed" in body:
        again["seed"] = body["seed"] + attempt - 1
    return again


def cached_tokens(usage: dict[str, Any]) -> int | None:
    """Prompt tokens served from the provider's prompt cache, where the provider reports
    them (OpenAI, vLLM and llama.cpp's server: `prompt_tokens_details.cached_tokens`)."""
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict):
        return details.get("cached_tokens")
    return None


def first_choice(completion: dict[str, Any]) -> dict[str, Any] | None:
    """The reply's first choice, as the chat completion's JSON has it."""
    choices = completion.get("choices")
    if not choices or not isinstance(choices[0], dict):
        return None
    return choices[0]


def message_text(choice: dict[str, Any] | None) -> str:
    message = (choice or {}).get("message")
    return (message.get("content") or "") if isinstance(message, dict) else ""


def as_float(value: Any) -> float:
    # What the SDK's models did to a whole number given for a float field (an exact int,
    # not a bool: this runs for every alternative of every token).
    return float(value) if type(value) is int else value


def reply_tokens(completion: dict[str, Any]) -> tuple[confidence.Token, ...] | None:
    """The reply's tokens with their listed alternatives, or None when the provider sent
    no log-probabilities (it does not support them, or was not asked)."""
    logprobs = (first_choice(completion) or {}).get("logprobs")
    if not isinstance(logprobs, dict) or not logprobs.get("content"):
        return None
    return tuple(
        confidence.Token(
            text=item["token"],
            logprob=as_float(item["logprob"]),
            alternatives=tuple(
                (alt["token"], as_float(alt["logprob"])) for alt in item.get("top_logprobs") or ()
            ),
        )
        for item in logprobs["content"]
    )


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
