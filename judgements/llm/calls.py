"""The one place that calls the openai SDK.

Each model maps to a provider: an OpenAI-compatible endpoint with its own key, timeout
and structured-output mode (a `ModelRoute`). Retries are ours (tenacity), not the SDK's,
so the attempt count in the audit log is the real one. What is sent and how a reply is
read is plain JSON, in completions.py.
"""

import asyncio
import contextlib
import functools
import importlib
import itertools
import ssl
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from django.utils import timezone
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from judgements.core import confidence, prompts
from judgements.core.errors import MagiError
from judgements.core.json_values import JsonObject
from judgements.llm.call_slots import PrioritySlots
from judgements.llm.completions import (
    ChatRequest,
    InvalidOutputError,
    ModelRoute,
    cached_tokens,
    first_choice,
    message_text,
    parse_verdict,
    reply_tokens,
    request_body,
    resampled,
    text_body,
    token_count,
    without_logprobs,
)
from judgements.models.magi_settings import magi_settings

# The SDK is imported where a call is made: `import openai` is a second of CPU that every
# process starting Django (a web worker, each command) would pay, calling a model or not.
if TYPE_CHECKING:
    import openai


class LLMCallError(MagiError):
    """A chat completion that finally failed; `cause` says why in words."""

    def __init__(self, cause: str, attempts: int) -> None:
        self.cause = cause
        self.attempts = attempts
        plural = "attempt" if attempts == 1 else "attempts"
        super().__init__(f"{cause} (after {attempts} {plural})")


@dataclass
class AttemptRecord:
    attempt: int
    request: ChatRequest
    started_at: datetime
    duration_ms: int
    base_url: str
    response_text: str = ""
    error: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    # Of the prompt tokens, those the provider served from its prompt cache (when it says).
    cached_tokens: int | None = None

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
    # P(approve) at the decision, from the reply's log-probabilities; None: unknown.
    p_approve: float | None = None


@dataclass
class TextReply:
    """A check's reply (judgements/core/check_prompts.py): its text and, where the provider
    gave them, its tokens with their alternatives."""

    text: str
    tokens: tuple[confidence.Token, ...] | None
    attempt: AttemptRecord


AttemptCallback = Callable[[AttemptRecord], Awaitable[None]]


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
        self._clients: dict[tuple[str | None, str | None, float, int], openai.AsyncOpenAI] = {}
        self._next_shard = itertools.count()
        # (provider, model or None) -> its call slots; read by tests and watchers.
        self.call_slots: dict[tuple[str, str | None], PrioritySlots] = {}
        # (provider, model) that answered HTTP 400 to a request for log-probabilities:
        # asked without them from then on, their confidence unknown.
        self.refuse_logprobs: set[tuple[str, str]] = set()

    def asks_logprobs(self, route: "ModelRoute") -> bool:
        return route.logprobs and (route.provider, route.model) not in self.refuse_logprobs

    def client(
        self, base_url: str | None, api_key: str | None, timeout: float
    ) -> "openai.AsyncOpenAI":
        import openai

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

    def slot(self, route: ModelRoute) -> contextlib.AbstractAsyncContextManager[None]:
        """Hold around each call: at most `route.concurrency` calls in flight per provider
        (per model for servers MAGI runs, each of which serves one model). Queueing here,
        not in the server, keeps the client's timeout for the call itself; and it lets a
        person's call go before an evaluation run's (judgements/llm/call_slots.py)."""
        if route.concurrency is None:
            return contextlib.nullcontext()
        key = (route.provider, route.model if route.server else None)
        slots = self.call_slots.setdefault(key, PrioritySlots(route.concurrency))
        return slots.hold(batch=route.batch)


def describe_failure(exc: BaseException, timeout: float) -> str:
    import openai

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


def is_call_failure(exc: BaseException) -> bool:
    """Whether `exc` is how a call fails (the SDK's errors, a reply that is no answer)
    rather than a fault of ours."""
    import openai

    return isinstance(exc, openai.OpenAIError | InvalidOutputError)


RETRYABLE_STATUS = {408, 409, 429}


def is_retryable(exc: BaseException) -> bool:
    import openai

    if isinstance(exc, InvalidOutputError | openai.APIConnectionError | LogprobsRefused):
        return True  # APITimeoutError is an APIConnectionError
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
    return False


class LogprobsRefused(Exception):
    """The provider answered HTTP 400 to a request for log-probabilities: asked again at
    once without them (Clients.refuse_logprobs)."""


async def endpoint(route: ModelRoute) -> str | None:
    """The base URL the route's calls go to. A server MAGI runs is started on its first
    call, in a thread; the SDK, not yet imported by a fresh process, is imported in another
    beside it rather than before it: a newcomer's first verdict on the bundled model waits
    for both, 0.4 s and 0.9 s on a two-core machine, 0.2 s less so (docs/benchmarks.md)."""
    if route.server is None:
        return route.base_url
    if "openai" in sys.modules:
        return await route.server(route.model)
    base_url, _ = await asyncio.gather(
        route.server(route.model), asyncio.to_thread(importlib.import_module, "openai")
    )
    return base_url


async def _attempt_once(
    clients: Clients,
    route: ModelRoute,
    body: ChatRequest,
    attempt: int,
    record_failure: AttemptCallback,
    allow_cut: bool,
) -> tuple[JsonObject, AttemptRecord]:
    async with clients.slot(route):
        return await _attempt_in_slot(clients, route, body, attempt, record_failure, allow_cut)


async def _attempt_in_slot(
    clients: Clients,
    route: ModelRoute,
    body: ChatRequest,
    attempt: int,
    record_failure: AttemptCallback,
    allow_cut: bool,
) -> tuple[JsonObject, AttemptRecord]:
    """One call: the completion and its audit record, or the failure recorded and
    raised. The reply's text is read by the caller (a verdict, a check)."""
    base_url = await endpoint(route)
    import openai

    started_at = timezone.now()
    began = time.perf_counter()
    entry = AttemptRecord(
        attempt=attempt, request=body, started_at=started_at, duration_ms=0, base_url=base_url or ""
    )
    try:
        client = clients.client(base_url, route.api_key, route.timeout)
        entry.base_url = str(client.base_url)
        # The typed chat.completions.create() walks every message through a recursive
        # TypedDict transform (about 4 ms a call here, most of the engine's CPU under
        # load). Our body is plain JSON already, so it goes through the SDK's own
        # post(): same HTTP client and errors. The reply stays the JSON it came as
        # (cast_to=object): building the SDK's ChatCompletion from it, object by object
        # down to every alternative of every token, was a tenth of the engine's CPU.
        data = await client.post("/chat/completions", body=body, cast_to=object)
        completion: JsonObject = data if isinstance(data, dict) else {}
        choice = first_choice(completion)
        entry.response_text = message_text(choice)
        usage = completion.get("usage")
        if isinstance(usage, dict):
            entry.prompt_tokens = token_count(usage.get("prompt_tokens"))
            entry.completion_tokens = token_count(usage.get("completion_tokens"))
            entry.cached_tokens = cached_tokens(usage)
        if choice is None:
            raise InvalidOutputError("reply has no choices")
        if choice.get("finish_reason") == "length" and not allow_cut:
            raise InvalidOutputError(
                f"reply cut off at max_tokens={body['max_tokens']}: {entry.response_text[:200]!r}"
            )
    except openai.BadRequestError as exc:
        entry.error = describe_failure(exc, route.timeout)
        entry.duration_ms = elapsed_ms(began)
        await record_failure(entry)
        if "logprobs" in body and "logprob" in entry.error.lower():
            clients.refuse_logprobs.add((route.provider, route.model))
            raise LogprobsRefused(entry.error) from exc
        raise
    except (openai.OpenAIError, InvalidOutputError) as exc:
        entry.error = describe_failure(exc, route.timeout)
        entry.duration_ms = elapsed_ms(began)
        await record_failure(entry)
        raise
    entry.duration_ms = elapsed_ms(began)
    return completion, entry


Read = TypeVar("Read")


async def request(
    clients: Clients,
    route: ModelRoute,
    body: ChatRequest,
    record_failure: AttemptCallback,
    read: Callable[[str], Read],
    first_attempt: int = 1,
    allow_cut: bool = False,
) -> tuple[JsonObject, AttemptRecord, Read]:
    """Send `body`, retrying what is worth retrying, until `read` accepts the reply's
    text (it raises InvalidOutputError when it does not).

    Every failed attempt is handed to `record_failure` before the next one starts; the
    successful one comes back, so the caller can store it with what it produced. Raises
    LLMCallError naming the cause once the attempts are used up or the failure is final
    (400, 401, 403, 404).
    """
    attempts = 0
    retrying = AsyncRetrying(
        stop=stop_after_attempt(magi_settings.MAGI_LLM_MAX_ATTEMPTS),
        wait=wait_exponential_jitter(
            multiplier=magi_settings.MAGI_LLM_RETRY_INITIAL_WAIT,
            jitter=magi_settings.MAGI_LLM_RETRY_INITIAL_WAIT,
            max=magi_settings.MAGI_LLM_RETRY_MAX_WAIT,
        ),
        retry=retry_if_exception(is_retryable),
        reraise=True,
    )
    previous: BaseException | None = None
    try:
        async for attempt in retrying:
            with attempt:
                attempts = attempt.retry_state.attempt_number
                sent = (
                    resampled(body, attempts) if isinstance(previous, InvalidOutputError) else body
                )
                if not clients.asks_logprobs(route):
                    sent = without_logprobs(sent)
                number = first_attempt + attempts - 1
                try:
                    completion, entry = await _attempt_once(
                        clients, route, sent, number, record_failure, allow_cut
                    )
                    try:
                        value = read(entry.response_text)
                    except InvalidOutputError as exc:
                        entry.error = str(exc)
                        await record_failure(entry)
                        raise
                    return completion, entry, value
                except BaseException as exc:
                    previous = exc
                    raise
    except LogprobsRefused as exc:
        raise LLMCallError(str(exc), attempts) from exc  # pragma: no cover - retried first
    except Exception as exc:
        if not is_call_failure(exc):
            raise
        raise LLMCallError(describe_failure(exc, route.timeout), attempts) from exc
    raise AssertionError("unreachable: tenacity either returns or re-raises")  # pragma: no cover


async def request_verdict(
    clients: Clients,
    route: ModelRoute,
    messages: list[dict[str, str]],
    record_failure: AttemptCallback,
    first_attempt: int = 1,
    variants: frozenset[prompts.Variant] = frozenset(),
) -> VerdictResult:
    """Ask one agent for its verdict (see `request`). `first_attempt`: the number the
    first attempt gets in the audit (after an answer the engine asks again, numbering
    goes on from it). `variants`: the prompt variants whose answer schema it asks for."""
    body = request_body(route, messages, variants)
    completion, entry, verdict = await request(
        clients, route, body, record_failure, parse_verdict, first_attempt
    )
    tokens = reply_tokens(completion)
    return VerdictResult(
        verdict=verdict,
        latency_ms=entry.duration_ms,
        prompt_tokens=entry.prompt_tokens,
        completion_tokens=entry.completion_tokens,
        attempt=entry,
        p_approve=None if tokens is None else confidence.answer_probability(tokens),
    )


async def request_text(
    clients: Clients,
    route: ModelRoute,
    messages: list[dict[str, str]],
    record_failure: AttemptCallback,
    *,
    max_tokens: int | None = None,
    schema: JsonObject | None = None,
    read: Callable[[str], object] = str,
) -> TextReply:
    """A check's call (judgements/core/check_prompts.py): plain text, or JSON to `schema` in
    the route's structured-output mode; a reply cut at `max_tokens` is what was asked for
    (a probe wants one word)."""
    body = text_body(route, messages, max_tokens, schema)
    completion, entry, _ = await request(
        clients, route, body, record_failure, read, allow_cut=schema is None
    )
    return TextReply(text=entry.response_text, tokens=reply_tokens(completion), attempt=entry)


def list_models(base_url: str | None, api_key: str | None, timeout: float) -> list[str]:
    """The model ids an OpenAI-compatible endpoint lists at GET /models; LLMCallError with
    the cause when it cannot be asked."""
    import openai

    try:
        with openai.OpenAI(
            base_url=base_url, api_key=api_key, timeout=timeout, max_retries=0
        ) as client:
            return sorted(model.id for model in client.models.list())
    except openai.OpenAIError as exc:
        raise LLMCallError(describe_failure(exc, timeout), 1) from exc


def elapsed_ms(began: float) -> int:
    return int((time.perf_counter() - began) * 1000)
