"""What every API view shares, written once: CSRF-exempt, JSON on every error (an
unexpected failure too), the caller's bearer token (401 without a working one), then the
method (405 naming the allowed ones). `@endpoint("GET", "POST")` on an async view that
takes the request and the caller's ApiToken."""

import asyncio
import contextlib
import functools
import logging
import weakref
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from judgements.engine.database import db_call
from judgements.models import ApiToken

logger = logging.getLogger(__name__)


def error(status: int, message: str, **extra) -> JsonResponse:
    return JsonResponse({"error": message, **extra}, status=status)


def body_too_large() -> JsonResponse:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return error(413, f"The body is larger than the limit of {limit:,} bytes.")


def invalid(errors: dict[str, list[str]]) -> JsonResponse:
    return JsonResponse({"error": "invalid input", "errors": errors}, status=400)


def json_errors(view):
    """Every answer under /api/ is JSON, an unexpected failure too (logged with its
    traceback, which the client never sees)."""

    @functools.wraps(view)
    async def wrapped(request: HttpRequest, *args, **kwargs) -> JsonResponse:
        try:
            return await view(request, *args, **kwargs)
        except RequestDataTooBig:
            # Raised where a view first reads request.body.
            return body_too_large()
        except SuspiciousOperation as exc:
            # What Django refuses to parse (over DATA_UPLOAD_MAX_NUMBER_FIELDS query fields,
            # say) is the client's error: a 400, as Django answers it outside the API.
            logger.warning("API request %s %s refused: %s", request.method, request.path, exc)
            return error(400, f"Bad request: {exc}")
        except Exception:
            logger.exception("API request %s %s failed", request.method, request.path)
            return error(500, "Internal error; it has been logged.")

    return wrapped


def bearer_token(request: HttpRequest) -> ApiToken | None:
    scheme, _, key = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        return None
    return ApiToken.active(key.strip())


def unauthorized() -> JsonResponse:
    response = error(401, "Send an API token: Authorization: Bearer <token>.")
    response["WWW-Authenticate"] = 'Bearer realm="magi"'
    return response


# Creations a process validates and stores at once. The rest wait their turn on the event
# loop, costing nothing, instead of filling the thread pool that reads need too: with all
# its threads busy validating a burst, a read (and the loop itself, through the GIL)
# waited half a second. Per event loop, as asyncio primitives belong to one.
CREATIONS_AT_ONCE = 2
_creation_slots: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]" = (
    weakref.WeakKeyDictionary()
)


def creation_slot() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    slots = _creation_slots.get(loop)
    if slots is None:
        slots = _creation_slots[loop] = asyncio.Semaphore(CREATIONS_AT_ONCE)
    return slots


def creation_gate(request: HttpRequest) -> contextlib.AbstractAsyncContextManager:
    """A POST that creates waits for a creation slot before its token is looked up."""
    return creation_slot() if request.method == "POST" else contextlib.nullcontext()


def endpoint(
    *methods: str,
    gate: Callable[[HttpRequest], contextlib.AbstractAsyncContextManager] | None = None,
):
    """An API view: token first (401), then the method (405), then `view(request, token,
    ...)`. `gate(request)` is held while the token is looked up: creations queue there."""

    def decorate(view):
        @csrf_exempt
        @json_errors
        @functools.wraps(view)
        async def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            async with gate(request) if gate else contextlib.nullcontext():
                token = await db_call(bearer_token, for_request=True)(request)
            if token is None:
                return unauthorized()
            if request.method not in methods:
                return error(405, f"Use {' or '.join(methods)}.")
            return await view(request, token, *args, **kwargs)

        return wrapped

    return decorate


@csrf_exempt
@json_errors
async def not_found(request: HttpRequest) -> JsonResponse:
    return error(404, f"No API at {request.path}; see /api/judgements/.")
