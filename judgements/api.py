"""The HTTP API, for programs that gate an action on MAGI before they take it.

    POST /api/judgements/?wait=120   a case as JSON -> 201 and the judgement
    GET  /api/judgements/<id>/?wait=30
    GET  /api/judgements/

Authentication is a bearer token (`manage.py api_token USER`). Errors are JSON: invalid
input answers 400 with {"errors": {field: [messages]}}, naming fields as the command
line does (`agents[2].model`).
"""

import asyncio
import contextlib
import json
import time

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from judgements import engine
from judgements.forms import CaseError, validate_case
from judgements.models import ApiToken, Judgement, group_name_for

WAIT_MAX_SECONDS = 300
# Even when every event arrives, look at the database now and then: an event can be lost
# (Redis restarting) and the database is what counts.
RECHECK_SECONDS = 5.0


def error(status: int, message: str, **extra) -> JsonResponse:
    return JsonResponse({"error": message, **extra}, status=status)


def invalid(errors: dict[str, list[str]]) -> JsonResponse:
    return JsonResponse({"error": "invalid input", "errors": errors}, status=400)


def bearer_user(request: HttpRequest):
    scheme, _, key = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        return None
    return ApiToken.user_for(key.strip())


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


def result_of(judgement_id: int) -> dict:
    judgement = Judgement.objects.prefetch_related("agents__decisions").get(pk=judgement_id)
    return judgement.as_result()


def is_finished(judgement_id: int) -> bool:
    return Judgement.objects.get(pk=judgement_id).is_finished


def find_visible(judgement_id: int, user) -> Judgement | None:
    judgement = Judgement.objects.filter(pk=judgement_id).first()
    if judgement is None or not judgement.visible_to(user):
        return None
    return judgement


async def wait_until_finished(judgement_id: int, seconds: float) -> None:
    """Follow the judgement's events until it ends or the time is up."""
    if seconds <= 0:
        return
    layer = get_channel_layer()
    channel = await layer.new_channel()
    group = group_name_for(judgement_id)
    await layer.group_add(group, channel)
    deadline = time.monotonic() + seconds
    try:
        while not await sync_to_async(is_finished)(judgement_id):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(layer.receive(channel), min(remaining, RECHECK_SECONDS))
    finally:
        await layer.group_discard(group, channel)


@csrf_exempt
async def judgements_collection(request: HttpRequest) -> JsonResponse:
    user = await sync_to_async(bearer_user)(request)
    if user is None:
        return unauthorized()
    if request.method == "GET":
        return JsonResponse({"judgements": await sync_to_async(recent_results)(user)})
    if request.method != "POST":
        return error(405, "Use GET or POST.")
    try:
        seconds = wait_seconds(request)
        case = await sync_to_async(validate_case)(parse_body(request))
    except CaseError as exc:
        return invalid(exc.errors)
    judgement = await sync_to_async(Judgement.create_with_agents)(case, user)
    await engine.wake(judgement.pk)
    await wait_until_finished(judgement.pk, seconds)
    response = JsonResponse(await sync_to_async(result_of)(judgement.pk), status=201)
    response["Location"] = f"/api/judgements/{judgement.pk}/"
    return response


@csrf_exempt
async def judgement_resource(request: HttpRequest, judgement_id: int) -> JsonResponse:
    user = await sync_to_async(bearer_user)(request)
    if user is None:
        return unauthorized()
    if request.method != "GET":
        return error(405, "Use GET.")
    if await sync_to_async(find_visible)(judgement_id, user) is None:
        return error(404, f"No judgement {judgement_id}.")
    try:
        seconds = wait_seconds(request)
    except CaseError as exc:
        return invalid(exc.errors)
    await wait_until_finished(judgement_id, seconds)
    return JsonResponse(await sync_to_async(result_of)(judgement_id))


def parse_body(request: HttpRequest):
    try:
        return json.loads(request.body or b"")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CaseError({"case": [f"The body is not valid JSON: {exc}"]}) from exc


def recent_results(user, limit: int = 50) -> list[dict]:
    judgements = Judgement.objects.prefetch_related("agents__decisions")
    if not user.is_staff:
        judgements = judgements.filter(creator=user)
    return [j.as_result() for j in judgements[:limit]]
