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

import logging

from django.http import HttpRequest, JsonResponse

from judgements.api import openapi
from judgements.api.endpoint import (
    creation_gate,
    creation_slot,
    endpoint,
    error,
    invalid,
    json_errors,
)
from judgements.core.errors import InvalidInput
from judgements.engine import events
from judgements.engine.database import db_call
from judgements.intake import idempotency, limits, start
from judgements.intake.cases import parse_case_json
from judgements.models import ApiToken, Judgement
from judgements.outcome import overrides, reviews, webhooks
from judgements.panels import saved_panels

logger = logging.getLogger(__name__)

WAIT_MAX_SECONDS = 300


def wait_seconds(request: HttpRequest) -> float:
    raw = request.GET.get("wait", "0").strip() or "0"
    try:
        seconds = float(raw)
    except ValueError:
        raise InvalidInput({"wait": ["Must be a number of seconds."]}) from None
    if not 0 <= seconds <= WAIT_MAX_SECONDS:
        raise InvalidInput({"wait": [f"Must be between 0 and {WAIT_MAX_SECONDS} seconds."]})
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


@endpoint("GET", "POST", gate=creation_gate)
async def judgements_collection(request: HttpRequest, token: ApiToken) -> JsonResponse:
    if request.method == "POST":
        return await submit(request, token)
    return JsonResponse({"judgements": await db_call(recent_results, for_request=True)(token.user)})


async def submit(request: HttpRequest, token: ApiToken) -> JsonResponse:
    """POST /api/judgements/: start a judgement, then wait for it up to ?wait seconds."""
    # Everything up to the insert holds a creation slot, as the token lookup did: in a
    # burst the requests past the slots wait here, costing nothing, so reads keep the
    # thread pool and the event loop (see CREATIONS_AT_ONCE).
    async with creation_slot():
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
        except InvalidInput as exc:
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


@endpoint("GET")
async def judgement_resource(
    request: HttpRequest, token: ApiToken, judgement_id: int
) -> JsonResponse:
    answer, seconds = await db_call(read_judgement, for_request=True)(request, token, judgement_id)
    if answer is not None:
        return answer
    await events.wait_until_finished(judgement_id, seconds)
    return JsonResponse(await db_call(result_of, for_request=True)(judgement_id))


def read_judgement(
    request: HttpRequest, token: ApiToken, judgement_id: int
) -> tuple[JsonResponse | None, float]:
    """The answer when it can be given now (an error, or the result without ?wait), else
    None and the seconds to wait first. One trip to the thread pool for a plain read:
    in a burst each trip waits its turn for a thread."""
    if find_visible(judgement_id, token.user) is None:
        return error(404, f"No judgement {judgement_id}."), 0
    try:
        seconds = wait_seconds(request)
    except InvalidInput as exc:
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
    except InvalidInput as exc:
        if url_errors:
            exc.errors["callback_url"] = url_errors
        raise
    if url_errors:
        raise InvalidInput({"callback_url": url_errors})
    return {**case, "callback_url": body["callback_url"]}


@endpoint("GET")
async def panels_collection(request: HttpRequest, token: ApiToken) -> JsonResponse:
    """The saved panels the caller may judge with: their own and the examples (staff:
    every panel). A case names one with "panel" in place of "agents"."""
    return JsonResponse(
        {"panels": await db_call(saved_panels.listing, for_request=True)(token.user)}
    )


def parse_body(request: HttpRequest):
    return parse_case_json(request.body, "The body")


def recent_results(user, limit: int = 50) -> list[dict]:
    judgements = with_results(Judgement.objects.visible_to(user))
    return [j.as_result() for j in judgements[:limit]]


@endpoint("POST")
async def judgement_override(
    request: HttpRequest, token: ApiToken, judgement_id: int
) -> JsonResponse:
    """A human's verdict over the panel's: {"decision": "approve"|"reject", "reason"}."""

    def store(user, body: dict) -> None:
        overrides.override(judgement_id, user, body.get("decision"), body.get("reason"))

    return await review(request, token, judgement_id, ("decision", "reason"), store)


@endpoint("POST")
async def judgement_confirm(
    request: HttpRequest, token: ApiToken, judgement_id: int
) -> JsonResponse:
    """A human keeps the panel's verdict after a look: {"reason"}."""

    def store(user, body: dict) -> None:
        reviews.confirm(judgement_id, user, body.get("reason"))

    return await review(request, token, judgement_id, ("reason",), store)


async def review(
    request: HttpRequest, token: ApiToken, judgement_id: int, fields: tuple[str, ...], store
):
    """The reviewer's POST, override or confirmation alike: visibility, permission and
    body checked in that order (the token and the method were), then `store(user, body)`."""
    user = token.user
    if await db_call(find_visible, for_request=True)(judgement_id, user) is None:
        return error(404, f"No judgement {judgement_id}.")
    if not await db_call(overrides.may_override, for_request=True)(user):
        return error(403, "You do not have the permission to review judgements.")
    try:
        try:
            body = parse_case_json(request.body, "The body")
        except InvalidInput as exc:
            raise InvalidInput({"body": exc.errors["case"]}) from None
        if not isinstance(body, dict):
            names = ", ".join(f'"{name}"' for name in fields)
            raise InvalidInput({"body": [f"Must be a JSON object: {{{names}}}."]})
        unknown = sorted(set(body) - set(fields))
        if unknown:
            raise InvalidInput({name: ["Unknown field."] for name in unknown})
        await db_call(store, for_request=True)(user, body)
    except InvalidInput as exc:
        return invalid(exc.errors)
    except overrides.OverrideConflict as exc:
        return error(409, exc.message)
    return JsonResponse(await db_call(result_of, for_request=True)(judgement_id), status=201)


@endpoint("GET")
async def reviews_collection(request: HttpRequest, token: ApiToken) -> JsonResponse:
    """The review queue: contested judgements nobody has reviewed, newest first."""
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
