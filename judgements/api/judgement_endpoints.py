"""The HTTP API, for programs that gate an action on MAGI before they take it.

    POST /api/judgements/?wait=120   a case as JSON -> 201 and the judgement
                                     (Idempotency-Key header: a retry starts nothing new;
                                     "callback_url": a signed webhook when it ends,
                                     judgements/outcome/webhooks.py)
    GET  /api/judgements/<id>/?wait=30
    GET  /api/judgements/
    POST /api/judgements/<id>/override   {"decision", "reason"} -> 201 (a human's verdict)
    POST /api/judgements/<id>/confirm    {"reason"} -> 201 (a human keeps the panel's verdict)
    GET  /api/reviews/                   contested judgements nobody has reviewed yet
    GET  /api/panels/                    the saved panels a case may name ("panel")
    GET  /api/schema.json                the OpenAPI 3.1 description of all of this

Authentication is a bearer token (`manage.py api_token USER`). Every answer is JSON:
invalid input answers 400 with {"errors": {field: [messages]}}, naming fields as the
command line does (`agents[2].model`); a body over the upload limit 413; a judgement over
a rate limit 429 with Retry-After (judgements/intake/limits.py); an Idempotency-Key reused with
another body 422; a second override 409.

Fail-closed: a client proceeds only on "status": "approved"; every other status (error,
idle, judging, rejected, held, anything unknown) and every error answer means "do not
proceed". "held": the panel's verdict is contested and the case asked to hold it until a
person confirms or overrides it (judgements/core/contested.py, judgements/outcome/reviews.py).
"""

import asyncio
import functools
import logging
import weakref

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from judgements.api import openapi
from judgements.engine import events
from judgements.engine.database import db_call
from judgements.intake import idempotency, limits, start
from judgements.intake.cases import CaseError, parse_case_json
from judgements.models import ApiToken, Judgement
from judgements.outcome import overrides, reviews, webhooks
from judgements.panels import saved_panels

logger = logging.getLogger(__name__)

WAIT_MAX_SECONDS = 300


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


@csrf_exempt
@json_errors
async def not_found(request: HttpRequest) -> JsonResponse:
    return error(404, f"No API at {request.path}; see /api/judgements/.")


def bearer_token(request: HttpRequest) -> ApiToken | None:
    scheme, _, key = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        return None
    return ApiToken.active(key.strip())


def unauthorized() -> JsonResponse:
    response = error(401, "Send an API token: Authorization: Bearer <token>.")
    response["WWW-Authenticate"] = 'Bearer realm="magi"'
    return response


def wait_seconds(request: HttpRequest) -> float:
    raw = request.GET.get("wait", "0").strip() or "0"
    try:
        seconds = float(raw)
    except ValueError:
        raise CaseError({"wait": ["Must be a number of seconds."]}) from None
    if not 0 <= seconds <= WAIT_MAX_SECONDS:
        raise CaseError({"wait": [f"Must be between 0 and {WAIT_MAX_SECONDS} seconds."]})
    return seconds


def with_results(judgements):
    """What as_result reads, in a fixed number of queries."""
    return judgements.select_related("override__by", "confirmation__by", "panel").prefetch_related(
        "agents__decisions"
    )


def result_of(judgement_id: int) -> dict:
    judgement = with_results(Judgement.objects).get(pk=judgement_id)
    return judgement.as_result()


def find_visible(judgement_id: int, user) -> Judgement | None:
    judgement = Judgement.objects.filter(pk=judgement_id).first()
    if judgement is None or not judgement.visible_to(user):
        return None
    return judgement


@csrf_exempt
@json_errors
async def judgements_collection(request: HttpRequest) -> JsonResponse:
    if request.method == "POST":
        return await submit(request)
    token = await db_call(bearer_token, for_request=True)(request)
    if token is None:
        return unauthorized()
    if request.method == "GET":
        return JsonResponse(
            {"judgements": await db_call(recent_results, for_request=True)(token.user)}
        )
    return error(405, "Use GET or POST.")


async def submit(request: HttpRequest) -> JsonResponse:
    """POST /api/judgements/: start a judgement, then wait for it up to ?wait seconds."""
    # Everything up to the insert holds a creation slot, the token lookup too: in a
    # burst the requests past the slots wait here, costing nothing, so reads keep the
    # thread pool and the event loop (see CREATIONS_AT_ONCE).
    async with creation_slot():
        token = await db_call(bearer_token, for_request=True)(request)
        if token is None:
            return unauthorized()
        user = token.user
        try:
            seconds = wait_seconds(request)
            key = idempotency.key_from(request.headers)
            if key is None:
                # Over a limit, refuse before paying for validation: in a burst most
                # requests are refused, and each must cost the server little. (A retry
                # with an Idempotency-Key gets its judgement back even over the limit.)
                await db_call(limits.check, for_request=True)(user, token)
            body = parse_body(request)
            case = await db_call(validate_api_case, for_request=True)(body, user)
            by = start.Submission(creator=user, api_token=token, key=key, body=body)
            started = await db_call(start.start_judgement, for_request=True)(case, by)
        except CaseError as exc:
            return invalid(exc.errors)
        except limits.Refused as exc:
            response = error(429, exc.message, retry_after=exc.retry_after)
            response["Retry-After"] = str(exc.retry_after)
            return response
        except idempotency.KeyReused as exc:
            return JsonResponse(
                {"error": exc.message, "errors": {idempotency.HEADER: [exc.message]}}, status=422
            )
    judgement_id = started.judgement.pk
    await events.wait_until_finished(judgement_id, seconds)
    response = JsonResponse(
        await db_call(result_of, for_request=True)(judgement_id), status=started.status_code
    )
    response["Location"] = f"/api/judgements/{judgement_id}/"
    if key is not None:
        response[REPLAYED_HEADER] = "true" if started.replayed else "false"
    return response


REPLAYED_HEADER = "Idempotency-Replayed"

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


@csrf_exempt
@json_errors
async def judgement_resource(request: HttpRequest, judgement_id: int) -> JsonResponse:
    answer, seconds = await db_call(read_judgement, for_request=True)(request, judgement_id)
    if answer is not None:
        return answer
    await events.wait_until_finished(judgement_id, seconds)
    return JsonResponse(await db_call(result_of, for_request=True)(judgement_id))


def read_judgement(request: HttpRequest, judgement_id: int) -> tuple[JsonResponse | None, float]:
    """The answer when it can be given now (an error, or the result without ?wait), else
    None and the seconds to wait first. One trip to the thread pool for a plain read:
    in a burst each trip waits its turn for a thread."""
    token = bearer_token(request)
    if token is None:
        return unauthorized(), 0
    if request.method != "GET":
        return error(405, "Use GET."), 0
    if find_visible(judgement_id, token.user) is None:
        return error(404, f"No judgement {judgement_id}."), 0
    try:
        seconds = wait_seconds(request)
    except CaseError as exc:
        return invalid(exc.errors), 0
    if seconds <= 0:
        return JsonResponse(result_of(judgement_id)), 0
    return None, seconds


def validate_api_case(body, user) -> dict:
    """A case as the API takes it: the shared case fields (forms.validate_case), a saved
    panel's name or id in place of the agents (saved_panels.validate_case) and
    optionally "callback_url", checked against the webhook allow-list."""
    if not isinstance(body, dict) or "callback_url" not in body:
        return saved_panels.validate_case(body, user, ("callback_url",))
    case_fields = {k: v for k, v in body.items() if k != "callback_url"}
    url_errors = webhooks.callback_url_errors(body["callback_url"], user)
    try:
        case = saved_panels.validate_case(case_fields, user, ("callback_url",))
    except CaseError as exc:
        if url_errors:
            exc.errors["callback_url"] = url_errors
        raise
    if url_errors:
        raise CaseError({"callback_url": url_errors})
    return {**case, "callback_url": body["callback_url"]}


@csrf_exempt
@json_errors
async def panels_collection(request: HttpRequest) -> JsonResponse:
    """The saved panels the caller may judge with: their own and the examples (staff:
    every panel). A case names one with "panel" in place of "agents"."""
    token = await db_call(bearer_token, for_request=True)(request)
    if token is None:
        return unauthorized()
    if request.method != "GET":
        return error(405, "Use GET.")
    return JsonResponse(
        {"panels": await db_call(saved_panels.listing, for_request=True)(token.user)}
    )


def parse_body(request: HttpRequest):
    return parse_case_json(request.body, "The body")


def recent_results(user, limit: int = 50) -> list[dict]:
    judgements = with_results(Judgement.objects.visible_to(user))
    return [j.as_result() for j in judgements[:limit]]


@csrf_exempt
@json_errors
async def judgement_override(request: HttpRequest, judgement_id: int) -> JsonResponse:
    """A human's verdict over the panel's: {"decision": "approve"|"reject", "reason"}."""

    def store(user, body: dict) -> None:
        overrides.override(judgement_id, user, body.get("decision"), body.get("reason"))

    return await review(request, judgement_id, ("decision", "reason"), store)


@csrf_exempt
@json_errors
async def judgement_confirm(request: HttpRequest, judgement_id: int) -> JsonResponse:
    """A human keeps the panel's verdict after a look: {"reason"}."""

    def store(user, body: dict) -> None:
        reviews.confirm(judgement_id, user, body.get("reason"))

    return await review(request, judgement_id, ("reason",), store)


async def review(request: HttpRequest, judgement_id: int, fields: tuple[str, ...], store):
    """The reviewer's POST, override or confirmation alike: token, method, visibility,
    permission and body checked in that order, then `store(user, body)`."""
    token = await db_call(bearer_token, for_request=True)(request)
    if token is None:
        return unauthorized()
    user = token.user
    if request.method != "POST":
        return error(405, "Use POST.")
    if await db_call(find_visible, for_request=True)(judgement_id, user) is None:
        return error(404, f"No judgement {judgement_id}.")
    if not await db_call(overrides.may_override, for_request=True)(user):
        return error(403, "You do not have the permission to review judgements.")
    try:
        try:
            body = parse_case_json(request.body, "The body")
        except CaseError as exc:
            raise CaseError({"body": exc.errors["case"]}) from None
        if not isinstance(body, dict):
            names = ", ".join(f'"{name}"' for name in fields)
            raise CaseError({"body": [f"Must be a JSON object: {{{names}}}."]})
        unknown = sorted(set(body) - set(fields))
        if unknown:
            raise CaseError({name: ["Unknown field."] for name in unknown})
        await db_call(store, for_request=True)(user, body)
    except CaseError as exc:
        return invalid(exc.errors)
    except overrides.OverrideConflict as exc:
        return error(409, exc.message)
    return JsonResponse(await db_call(result_of, for_request=True)(judgement_id), status=201)


@csrf_exempt
@json_errors
async def reviews_collection(request: HttpRequest) -> JsonResponse:
    """The review queue: contested judgements nobody has reviewed, newest first."""
    token = await db_call(bearer_token, for_request=True)(request)
    if token is None:
        return unauthorized()
    if request.method != "GET":
        return error(405, "Use GET.")
    if not await db_call(overrides.may_override, for_request=True)(token.user):
        return error(403, "You do not have the permission to review judgements.")
    return JsonResponse({"judgements": await db_call(queued_results, for_request=True)(token.user)})


def queued_results(user, limit: int = 50) -> list[dict]:
    return [j.as_result() for j in with_results(reviews.queue(user))[:limit]]


@json_errors
async def schema(request: HttpRequest) -> JsonResponse:
    if request.method != "GET":
        return error(405, "Use GET.")
    return JsonResponse(openapi.document(WAIT_MAX_SECONDS))
