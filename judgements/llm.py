"""The one place that calls the openai SDK.

Each model maps to a provider: an OpenAI-compatible endpoint with its own key, timeout
and structured-output mode. Retries are ours (tenacity), not the SDK's, so the attempt
count in the audit log is the real one.
"""

import asyncio
import contextlib
import functools
import itertools
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

import openai
from django.conf import settings
from django.utils import timezone
from openai.types.chat import ChatCompletion
from pydantic import ValidationError
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from judgements import prompts
from judgements.errors import MagiError

LOCAL_PROVIDER = "local"


class UnknownModelError(MagiError):
    pass


class LLMCallError(MagiError):
    """A chat completion that finally failed; `cause` says why in words."""

    def __init__(self, cause: str, attempts: int) -> None:
        self.cause = cause
        self.attempts = attempts
        plural = "attempt" if attempts == 1 else "attempts"
        super().__init__(f"{cause} (after {attempts} {plural})")


class InvalidOutputError(Exception):
    """The reply arrived but is not a valid verdict; worth another attempt."""


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


@dataclass
class AttemptRecord:
    attempt: int
    request: dict
    started_at: datetime
    duration_ms: int
    base_url: str
    response_text: str = ""
    error: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @property
    def ok(self) -> bool:
        return not self.error


@dataclass
class VerdictResult:
    verdict: prompts.AgentVerdict
    latency_ms: int
    prompt_tokens: int | None
    completion_tokens: int | None
    attempt: AttemptRecord  # the successful one; failed ones went to the callback


AttemptCallback = Callable[[AttemptRecord], Awaitable[None]]


def _local_llm():
    # Imported lazily: the local runtime is optional and only matters for local models.
    from judgements import local_llm

    return local_llm


def local_model_names() -> list[str]:
    return sorted(_local_llm().local_model_files())


def available_models() -> list[str]:
    """Every model this deployment can route, remote and local, in a stable order."""
    names: list[str] = []
    for provider in settings.MAGI_PROVIDERS.values():
        names.extend(m for m in provider["models"] if m not in names)
    names.extend(m for m in local_model_names() if m not in names)
    return names


def temperature_for(model: str, provider_default: float) -> float:
    """A per-model temperature (MAGI_MODEL_TEMPERATURES) beats its provider's."""
    return settings.MAGI_MODEL_TEMPERATURES.get(model, provider_default)


def route_for(model: str) -> ModelRoute:
    for name, provider in settings.MAGI_PROVIDERS.items():
        if model in provider["models"]:
            return ModelRoute(
                model=model,
                provider=name,
                base_url=provider["base_url"],
                api_key=provider["api_key"],
                structured_output=provider["structured_output"],
                timeout=provider["timeout"],
                temperature=temperature_for(model, provider["temperature"]),
                seed=provider["seed"],
            )
    local = _local_llm()
    if model in local.local_model_files():
        return ModelRoute(
            model=model,
            provider=LOCAL_PROVIDER,
            base_url=None,  # known once the local server has started
            api_key=local.LOCAL_API_KEY,
            structured_output=local.LOCAL_STRUCTURED_OUTPUT,
            timeout=settings.MAGI_LOCAL_TIMEOUT,
            temperature=temperature_for(model, settings.MAGI_LLM_TEMPERATURE),
            seed=settings.MAGI_LLM_SEED,
        )
    known = ", ".join(available_models()) or "none configured"
    raise UnknownModelError(f"unknown model {model!r}; this deployment knows: {known}")


@functools.cache
def _tls_context() -> ssl.SSLContext:
    # Loading the system's CA certificates (honouring SSL_CERT_FILE / SSL_CERT_DIR) takes
    # about 0.1 s: once per process, not once per pool.
    return ssl.create_default_context()


class Clients:
    """The SDK clients and call slots of one event loop (an HTTP pool must not cross
    loops): each engine runner owns one.

    Clients are kept per endpoint and spread over a few pools: the SDK's HTTP pool checks
    every idle connection each time it hands one out, which with hundreds of calls in
    flight in one pool cost a third of the engine's CPU.
    """

    POOL_SHARDS = 16

    def __init__(self) -> None:
        self._clients: dict[tuple, openai.AsyncOpenAI] = {}
        self._next_shard = itertools.count()
        self._slots: dict[str, asyncio.Semaphore] = {}

    def client(self, base_url: str | None, api_key: str | None, timeout: float):
        key = (base_url, api_key, timeout, next(self._next_shard) % self.POOL_SHARDS)
        if key not in self._clients:
            self._clients[key] = openai.AsyncOpenAI(
                base_url=base_url,
                api_key=api_key,
                timeout=timeout,
                max_retries=0,
                http_client=openai.DefaultAsyncHttpxClient(verify=_tls_context()),
            )
        return self._clients[key]

    def slot(self, route: ModelRoute) -> contextlib.AbstractAsyncContextManager:
        """The local llama.cpp server answers one request at a time and counts queueing
        against the client's timeout, so local calls queue here instead, one at a time."""
        if route.provider != LOCAL_PROVIDER:
            return contextlib.nullcontext()
        return self._slots.setdefault(route.model, asyncio.Semaphore(1))


def request_body(route: ModelRoute, messages: list[dict[str, str]]) -> dict:
    # Temperature 0 (the default) and a fixed seed make a verdict decisive and the same
    # judgement repeatable; without them the server's own sampling defaults apply.
    body: dict = {
        "model": route.model,
        "messages": messages,
        "max_tokens": max_tokens(route),
        "temperature": route.temperature,
    }
    if route.seed is not None:
        body["seed"] = route.seed
    if route.structured_output == "json_schema":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": "agent_verdict",
                "strict": True,
                "schema": prompts.verdict_schema(with_length_bound=False),
            },
        }
    elif route.structured_output == "json_object":
        # llama.cpp's server takes the schema inside json_object and answers HTTP 500 to
        # json_schema.
        body["response_format"] = {"type": "json_object", "schema": prompts.verdict_schema()}
    return body


def max_tokens(route: ModelRoute) -> int:
    if route.provider == LOCAL_PROVIDER:
        return max(settings.MAGI_LLM_MAX_TOKENS, _local_llm().LOCAL_MAX_TOKENS)
    return settings.MAGI_LLM_MAX_TOKENS


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


def describe_failure(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, InvalidOutputError):
        return str(exc)
    if isinstance(exc, openai.APITimeoutError):
        return f"timed out after {timeout:g} s"
    if isinstance(exc, openai.APIConnectionError):
        inner = exc.__cause__ or exc
        return f"connection failed: {inner}"
    if isinstance(exc, openai.APIStatusError):
        message = exc.message
        with contextlib.suppress(Exception):
            body = exc.response.json()
            message = body.get("error", {}).get("message") or message
        return f"HTTP {exc.status_code}: {message}"
    return f"{type(exc).__name__}: {exc}"


RETRYABLE_STATUS = {408, 409, 429}


def is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, InvalidOutputError | openai.APIConnectionError):
        return True  # APITimeoutError is an APIConnectionError
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
    return False


async def _attempt_once(
    clients: Clients,
    route: ModelRoute,
    body: dict,
    attempt: int,
    record_failure: AttemptCallback,
) -> VerdictResult:
    async with clients.slot(route):
        return await _attempt_in_slot(clients, route, body, attempt, record_failure)


async def _attempt_in_slot(
    clients: Clients,
    route: ModelRoute,
    body: dict,
    attempt: int,
    record_failure: AttemptCallback,
) -> VerdictResult:
    base_url = route.base_url
    if route.provider == LOCAL_PROVIDER:
        base_url = await _local_llm().local_base_url(route.model)
    started_at = timezone.now()
    began = time.perf_counter()
    entry = AttemptRecord(
        attempt=attempt,
        request=body,
        started_at=started_at,
        duration_ms=0,
        base_url=base_url or "",
    )
    try:
        client = clients.client(base_url, route.api_key, route.timeout)
        entry.base_url = str(client.base_url)
        # The typed chat.completions.create() walks every message through a recursive
        # TypedDict transform (about 4 ms a call here, most of the engine's CPU under
        # load). Our body is plain JSON already, so it goes through the SDK's own
        # post(): same HTTP client, errors and response model, without that walk.
        completion = await client.post("/chat/completions", body=body, cast_to=ChatCompletion)
        choice = completion.choices[0] if completion.choices else None
        entry.response_text = (choice.message.content or "") if choice else ""
        if completion.usage:
            entry.prompt_tokens = completion.usage.prompt_tokens
            entry.completion_tokens = completion.usage.completion_tokens
        if choice is None:
            raise InvalidOutputError("reply has no choices")
        if choice.finish_reason == "length":
            raise InvalidOutputError(
                f"reply cut off at max_tokens={body['max_tokens']}: {entry.response_text[:200]!r}"
            )
        verdict = parse_verdict(entry.response_text)
    except (openai.OpenAIError, InvalidOutputError) as exc:
        entry.error = describe_failure(exc, route.timeout)
        entry.duration_ms = elapsed_ms(began)
        await record_failure(entry)
        raise
    entry.duration_ms = elapsed_ms(began)
    return VerdictResult(
        verdict=verdict,
        latency_ms=entry.duration_ms,
        prompt_tokens=entry.prompt_tokens,
        completion_tokens=entry.completion_tokens,
        attempt=entry,
    )


async def request_verdict(
    clients: Clients,
    route: ModelRoute,
    messages: list[dict[str, str]],
    record_failure: AttemptCallback,
) -> VerdictResult:
    """Ask one agent for its verdict, retrying what is worth retrying.

    Every failed attempt is handed to `record_failure` before the next one starts; the
    successful one comes back in the result, so the caller can store it together with
    the decision it produced.
    Raises LLMCallError naming the cause once the attempts are used up or the failure
    is final (400, 401, 403, 404).
    """
    body = request_body(route, messages)
    attempts = 0
    retrying = AsyncRetrying(
        stop=stop_after_attempt(settings.MAGI_LLM_MAX_ATTEMPTS),
        wait=wait_exponential_jitter(
            multiplier=settings.MAGI_LLM_RETRY_INITIAL_WAIT,
            jitter=settings.MAGI_LLM_RETRY_INITIAL_WAIT,
            max=settings.MAGI_LLM_RETRY_MAX_WAIT,
        ),
        retry=retry_if_exception(is_retryable),
        reraise=True,
    )
    try:
        async for attempt in retrying:
            with attempt:
                attempts = attempt.retry_state.attempt_number
                return await _attempt_once(clients, route, body, attempts, record_failure)
    except (openai.OpenAIError, InvalidOutputError) as exc:
        raise LLMCallError(describe_failure(exc, route.timeout), attempts) from exc
    raise AssertionError("unreachable: tenacity either returns or re-raises")  # pragma: no cover


def elapsed_ms(began: float) -> int:
    return int((time.perf_counter() - began) * 1000)
