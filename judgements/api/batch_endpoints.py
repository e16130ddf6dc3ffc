"""Many configuration changes in one transaction: all or nothing.

    POST /api/batch/[?dry_run=true]
         {"operations": [{"method", "path", "if_match", "body"}, ...], "parts": [...]}
    POST /api/batch/parts/   {"operations": [...]} -> 201 {"part"}: sent ahead
    GET  /api/batch/         what one request may hold (MAGI_MAX_BODY_BYTES, operations)

A batch larger than one request body is sent as parts, then the batch that names them:
their operations come first, and all of them run in the one transaction, so the batch
stays all or nothing whatever its size. The batch consumes its parts (applied, refused
or a dry run alike); a part never named is dropped after BatchPart.PART_LIFETIME.

Each operation is one the configuration API takes on its own (a panel, a budget, a team
or a suite created, replaced or deleted), made by the same function, in order. When one
is refused, nothing of the batch stays: the answer is that refusal, its status and body
(422 for any invalid input), with `operation` (its index) and each field path under
`operations[i].`. `magi apply`
sends its whole plan this way, so a refusal in the middle changes nothing.
"""

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest
from django.utils import timezone
from ninja import Router, Status
from pydantic import BaseModel

from judgements.api import (
    config_schemas,
    kinds,  # noqa: F401 - registers every kind of configuration
    resources,
    schemas,
)
from judgements.api.changes import DryRun, in_transaction
from judgements.api.site import token_of
from judgements.core import etags
from judgements.core.errors import Conflict, Forbidden, InvalidInput, NotFound
from judgements.infrastructure.database import db_call
from judgements.models import ApiToken, BatchPart

router = Router(tags=["configuration"])


@dataclass(frozen=True)
class Operation:
    """One method of a registered kind (api/resources.py), matched by its path."""

    method: str
    pattern: re.Pattern[str]
    resource: resources.Kind

    def handle(
        self, token: ApiToken, pk: int | None, sent: config_schemas.BatchOperation, prefix: str
    ) -> tuple[int, BaseModel | None]:
        """(status, answer) as the request alone would get them, its body (and a suite's
        query) read as the request's would be; never a dry run: the batch's transaction is
        the one rolled back."""
        if_match = sent.if_match or etags.ANY
        if self.method == "POST":
            return 201, self.resource.create_batched(token, sent, prefix)
        if self.method == "PUT":
            return 200, self.resource.replace_batched(token, pk or 0, sent, prefix, if_match)
        self.resource.delete(token, pk or 0, if_match, False)
        return 204, None


def operations() -> list[Operation]:
    """The batch's table: every method of every registered kind it takes (not a user's
    nor a token's: `magi apply` sends none, and a token's key is shown once)."""
    return [
        Operation(method, pattern, resource)
        for resource in resources.registered()
        if resource.versioned
        for method, pattern in resource.paths().items()
    ]


class Failed(Exception):
    """Operation `index` was refused: its answer, as the request alone would get it."""

    def __init__(self, status: int, answer: config_schemas.BatchFailure) -> None:
        self.status, self.answer = status, answer
        super().__init__(answer.error)


def run(
    token: ApiToken, batch: config_schemas.BatchRequest, dry_run: bool
) -> list[config_schemas.BatchItem]:
    """Every operation, its parts' first, in order, in one transaction (rolled back when
    `dry_run`); the parts consumed whatever the outcome."""

    def every() -> list[config_schemas.BatchItem]:
        operations = [*staged(token, batch.parts), *batch.operations]
        return [result(token, index, op) for index, op in enumerate(operations)]

    try:
        return in_transaction(dry_run, every)
    finally:
        BatchPart.objects.filter(user=token.user, key__in=batch.parts).delete()


def staged(token: ApiToken, keys: list[str]) -> list[config_schemas.BatchOperation]:
    """The operations of the parts `keys` names, in order: the caller's own, unexpired."""
    fresh = BatchPart.objects.filter(
        user=token.user, created_at__gte=timezone.now() - BatchPart.PART_LIFETIME
    )
    found = {part.key: part for part in fresh.filter(key__in=keys)}
    missing = {
        f"parts[{index}]": [
            "Named twice."
            if key in found
            else "No such batch part of yours (sent more "
            "than an hour ago, or used by a batch already)."
        ]
        for index, key in enumerate(keys)
        if key not in found or keys.index(key) != index
    }
    if missing:
        raise InvalidInput(missing)
    return [
        config_schemas.BatchOperation.model_validate(operation)
        for key in keys
        for operation in found[key].operations
    ]


def stage(token: ApiToken, part: config_schemas.BatchPartWrite) -> config_schemas.BatchPartMade:
    """Keep a part for the batch that will name it; drop the expired ones."""
    BatchPart.objects.filter(created_at__lt=timezone.now() - BatchPart.PART_LIFETIME).delete()
    operations = [operation.model_dump(mode="json") for operation in part.operations]
    made = BatchPart.objects.create(user=token.user, operations=operations)
    return config_schemas.BatchPartMade(part=made.key, operations=len(operations))


def result(
    token: ApiToken, index: int, sent: config_schemas.BatchOperation
) -> config_schemas.BatchItem:
    """One operation's answer, or Failed with what it alone would have been answered."""
    prefix = f"operations[{index}]."
    try:
        if sent.method != "POST" and sent.if_match is None:
            raise InvalidInput({prefix + "if_match": [etags.REQUIRED]}, breaks_schema=True)
        operation, path_id = matched(sent, prefix)
        status, answer = operation.handle(token, path_id, sent, prefix)
    except InvalidInput as exc:
        errors = {
            key if key.startswith(prefix) else f"{prefix}body.{key}": messages
            for key, messages in exc.errors.items()
        }
        # 422 even for what breaks an operation's own schema: the batch's document cannot
        # describe each operation's body, so a batch it allows is refused by a rule.
        refused = config_schemas.BatchFailure(error="invalid input", errors=errors, operation=index)
        raise Failed(422, refused) from None
    except (NotFound, Forbidden, Conflict) as exc:
        code = {NotFound: 404, Forbidden: 403, Conflict: 409}[type(exc)]
        raise Failed(
            code, config_schemas.BatchFailure(error=exc.message, operation=index)
        ) from None
    except etags.Stale as exc:
        stale = config_schemas.BatchFailure(error=exc.message, etag=exc.current, operation=index)
        raise Failed(412, stale) from None
    dumped = None if answer is None else answer.model_dump(mode="json")
    etag = None if dumped is None else dumped.get("etag")
    return config_schemas.BatchItem(status=status, body=dumped, etag=etag)


def matched(sent: config_schemas.BatchOperation, prefix: str) -> tuple[Operation, int | None]:
    """The operation a method and path name, and the path's id."""
    split = urlsplit(sent.path)
    for operation in operations():
        found = operation.pattern.fullmatch(split.path)
        if operation.method == sent.method and found:
            return operation, int(found.group(1)) if found.groups() else None
    raise InvalidInput({prefix + "path": [f"No operation {sent.method} {sent.path} in a batch."]})


@router.get(
    "/batch/", url_name="api-batch", response={200: config_schemas.BatchLimits, 401: schemas.Error}
)
async def batch_limits(request: HttpRequest) -> config_schemas.BatchLimits:
    """What one request of a batch may hold; `magi apply` sends a larger one as parts."""
    return config_schemas.BatchLimits(
        max_body_bytes=settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
        max_operations=config_schemas.BATCH_MAX_OPERATIONS,
    )


@router.post(
    "/batch/parts/",
    url_name="api-batch-parts",
    response={
        201: config_schemas.BatchPartMade,
        (400, 422): schemas.Invalid,
        (401, 413): schemas.Error,
    },
)
async def send_part(
    request: HttpRequest, body: config_schemas.BatchPartWrite
) -> Status[config_schemas.BatchPartMade]:
    """Operations of a batch sent ahead of it, checked as a batch checks its own: each
    one is made only when the batch naming this part runs."""
    made = await db_call(stage, for_request=True)(token_of(request), body)
    return Status(201, made)


@router.post(
    "/batch/",
    url_name="api-batch",
    response={
        200: config_schemas.BatchResult,
        (400, 403, 404, 409, 412, 422): config_schemas.BatchFailure,
        (401, 413): schemas.Error,
    },
)
async def apply_batch(
    request: HttpRequest, body: config_schemas.BatchRequest, dry_run: DryRun = False
) -> Status[config_schemas.BatchResult | config_schemas.BatchFailure]:
    """Every operation in one transaction: 200 and each one's answer, or the first refusal
    (with `operation`, its index) and nothing changed."""
    try:
        results = await db_call(run, for_request=True)(token_of(request), body, dry_run)
    except Failed as failed:
        return Status(failed.status, failed.answer)
    return Status(200, config_schemas.BatchResult(results=results))
