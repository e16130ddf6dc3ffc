"""The API of judgements, for programs that gate an action on MAGI before they take it.

    POST /api/judgements/?wait=120   a case -> 201 and the judgement (Idempotency-Key: a
                                     retry starts nothing new; "callback_url": a signed
                                     webhook when it ends, judgements/outcome/webhooks.py)
    GET  /api/judgements/<id>/?wait=30
    GET  /api/judgements/            the caller's 50 most recent
    GET  /api/judgements/<id>/evidence   its evidence pack (docs/evidence.md)
    POST /api/judgements/<id>/override   {"decision", "reason"} -> 201 (a human's verdict)
    POST /api/judgements/<id>/confirm    {"reason"} -> 201 (a human keeps the panel's)
    GET  /api/reviews/               contested judgements nobody has reviewed yet

Each view is the service calls and nothing else: the token, the parsing, the validation
(intake/schemas.py) and the error answers are api/site.py's. Fail-closed: a client
proceeds only on "status": "approved".
"""

from collections.abc import Callable
from typing import Annotated

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from ninja import Header, Path, Query, Router, Status

from judgements.api import schemas
from judgements.api.site import WAIT_MAX_SECONDS, body_of, token_of
from judgements.infrastructure import events
from judgements.infrastructure.database import db_call
from judgements.intake import idempotency, start
from judgements.intake.schemas import CaseWithCallback
from judgements.outcome import overrides, results, reviews

router = Router(tags=["judgements"])

# Digits only (Django's int converter): anything else under /api/ is a JSON 404.
JudgementId = Annotated[int, Path(description="A judgement's id.")]
Wait = Annotated[
    float,
    Query(
        ge=0,
        le=WAIT_MAX_SECONDS,
        allow_inf_nan=False,
        description="Seconds to wait for the judgement to finish before answering.",
    ),
]
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias=idempotency.HEADER,
        min_length=1,
        max_length=idempotency.MAX_LENGTH,
        description="Per user. The same key and body answer with the judgement the first "
        "request started and start nothing; the same key with another body answers 422. "
        "Remembered for MAGI_IDEMPOTENCY_HOURS (24 by default).",
    ),
]
REPLAYED_HEADER = "Idempotency-Replayed"
ERRORS = {401: schemas.Error, 404: schemas.Error}


@router.get(
    "/judgements/",
    url_name="api-judgements",
    response={200: schemas.JudgementList, 401: schemas.Error},
)
async def list_judgements(request: HttpRequest) -> schemas.JudgementList:
    """The caller's 50 most recent judgements (staff: everyone's), newest first."""
    user = token_of(request).user
    found = await db_call(results.recent_results, for_request=True)(user)
    return schemas.JudgementList(judgements=found)


@router.post(
    "/judgements/",
    url_name="api-judgements",
    response={
        (200, 201): schemas.Judgement,
        (400, 422): schemas.Invalid,
        (401, 413): schemas.Error,
        402: schemas.OverBudget,
        429: schemas.Error,
    },
)
async def submit_judgement(
    request: HttpRequest,
    case: CaseWithCallback,
    response: HttpResponse,
    wait: Wait = 0,
    key: IdempotencyKey = None,
) -> Status[schemas.Error | schemas.Judgement]:
    """Submit a case; optionally wait for its verdict. 201: stored and queued (200: an
    Idempotency-Key replayed, nothing new started). 429 with Retry-After: a rate limit."""
    token = token_of(request)
    key = idempotency.key_from({idempotency.HEADER: key} if key is not None else {})
    by = start.Submission(creator=token.user, api_token=token, key=key, body=body_of(request))
    started = await start.submit_from_loop([case.case()], by)
    judgement_id = started.judgement.pk
    await events.wait_until_finished(judgement_id, wait)
    response["Location"] = f"/api/judgements/{judgement_id}/"
    if key is not None:
        response[REPLAYED_HEADER] = "true" if started.replayed else "false"
    return Status(
        started.status_code, await db_call(results.result_of, for_request=True)(judgement_id)
    )


@router.get(
    "/judgements/{int:judgement_id}/",
    response={200: schemas.Judgement, 400: schemas.Invalid, **ERRORS},
)
async def read_judgement(
    request: HttpRequest, judgement_id: JudgementId, wait: Wait = 0
) -> schemas.Judgement | Status[schemas.Error]:
    """One judgement, optionally waiting for it to finish."""
    user = token_of(request).user
    if wait <= 0:
        # One trip to the thread pool for a plain read: in a burst each trip waits its
        # turn for a thread (bench/abuse.py).
        result = await db_call(results.visible_result, for_request=True)(judgement_id, user)
    elif await db_call(results.find_visible, for_request=True)(judgement_id, user):
        await events.wait_until_finished(judgement_id, wait)
        result = await db_call(results.result_of, for_request=True)(judgement_id)
    else:
        result = None
    if result is None:
        return Status(404, schemas.Error(error=f"No judgement {judgement_id}."))
    return result


@router.get(
    "/judgements/{int:judgement_id}/evidence",
    url_name="api-evidence",
    response={200: schemas.EvidencePack, 400: schemas.Invalid, **ERRORS},
)
async def judgement_evidence(
    request: HttpRequest, judgement_id: JudgementId
) -> schemas.EvidencePack | Status[schemas.Error]:
    """One judgement's evidence pack: its content, every prompt and reply, the checks,
    the review, the signed receipt and its audit log entries (docs/evidence.md).
    `magi verify PACK --keys KEYS` checks it offline."""
    user = token_of(request).user
    pack = await db_call(results.visible_pack, for_request=True)(judgement_id, user)
    if pack is None:
        return Status(404, schemas.Error(error=f"No judgement {judgement_id}."))
    return schemas.EvidencePack.model_validate(pack)


REVIEW_ANSWERS = {
    201: schemas.Judgement,
    (400, 422): schemas.Invalid,
    (401, 403, 404, 409, 413): schemas.Error,
}


@router.post(
    "/judgements/{int:judgement_id}/override", url_name="api-override", response=REVIEW_ANSWERS
)
async def override_judgement(
    request: HttpRequest, judgement_id: JudgementId, body: schemas.OverrideRequest
) -> Status[schemas.Error | schemas.Judgement]:
    """A human's verdict over the panel's (staff, or the override_judgement permission).
    The panel's stays in panel_status. 409: not finished yet, or already overridden."""

    def store(user: User) -> None:
        overrides.override(judgement_id, user, body.decision, body.reason)

    return await review(request, judgement_id, store)


@router.post(
    "/judgements/{int:judgement_id}/confirm", url_name="api-confirm", response=REVIEW_ANSWERS
)
async def confirm_judgement(
    request: HttpRequest, judgement_id: JudgementId, body: schemas.ConfirmRequest
) -> Status[schemas.Error | schemas.Judgement]:
    """A reviewer keeps the panel's verdict, with a reason; releases a held verdict. 409:
    not approved or rejected, or already reviewed."""

    def store(user: User) -> None:
        reviews.confirm(judgement_id, user, body.reason)

    return await review(request, judgement_id, store)


async def review(
    request: HttpRequest, judgement_id: int, store: Callable[[User], None]
) -> Status[schemas.Error | schemas.Judgement]:
    """Visibility, then permission (403 saying why not: four eyes names who else may),
    then `store(user)` (which validates the reason)."""
    user = token_of(request).user
    judgement = await db_call(results.find_visible, for_request=True)(judgement_id, user)
    if judgement is None:
        return Status(404, schemas.Error(error=f"No judgement {judgement_id}."))
    refused = await db_call(overrides.refusal, for_request=True)(user, judgement)
    if refused is not None:
        return Status(403, schemas.Error(error=refused.message))
    try:
        await db_call(store, for_request=True)(user)
    except overrides.OverrideConflict as exc:
        return Status(409, schemas.Error(error=exc.message))
    return Status(201, await db_call(results.result_of, for_request=True)(judgement_id))


@router.get("/reviews/", response={200: schemas.JudgementList, (401, 403): schemas.Error})
async def review_queue(request: HttpRequest) -> schemas.JudgementList | Status[schemas.Error]:
    """The review queue: contested judgements nobody has confirmed or overridden, newest
    first: those the caller may review (staff: all; a panel's reviewers: its judgements,
    whoever submitted them)."""
    user = token_of(request).user
    refused = await db_call(overrides.refusal, for_request=True)(user)
    if refused is not None:
        return Status(403, schemas.Error(error=refused.message))
    found = await db_call(results.queued_results, for_request=True)(user)
    return schemas.JudgementList(judgements=found)
