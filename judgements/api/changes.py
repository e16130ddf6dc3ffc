"""What every change of the configuration API shares: the If-Match header it must send,
the dry run, the refusals it answers with, and the transaction a change (and its
answer) is made in.

A change and the answer describing it are made in one transaction, so a dry run can
answer exactly what the change would and then roll everything back: nothing stored,
nothing audited.
"""

from collections.abc import Callable
from typing import Annotated, TypeVar

from django.db import transaction
from django.http import HttpResponse
from ninja.params import models as params
from pydantic import BaseModel

from judgements.api import config_schemas, schemas
from judgements.configuration.change_request import Change
from judgements.core import etags
from judgements.models import ApiToken

T = TypeVar("T")

# The If-Match header and the dry run every change takes: ninja's own descriptions, for
# a view's signature (IfMatch, DryRun) and for a generated route (api/resource_routes.py).
IF_MATCH_HEADER = params.Header(
    ...,
    alias="If-Match",
    min_length=1,
    description="The ETag you read the object with (its `etag`; several, comma-separated, "
    "or `*`: whatever it is now). Another answers 412 and changes nothing.",
)
DRY_RUN_QUERY = params.Query(
    False, description="Validate and answer as the change would, then store nothing (nor audit)."
)
IfMatch = Annotated[str, IF_MATCH_HEADER]
DryRun = Annotated[bool, DRY_RUN_QUERY]


# What a route answers besides its success, by status code(s): ninja's `response`.
Refusals = dict[int | tuple[int, ...], type[BaseModel] | None]


def write_refusals(*own: int) -> Refusals:
    """The refusals of a create or a replace: an invalid body, no token, no right, no such
    object, a body too large, a stale If-Match. `own`: an area's statuses of its own (a
    suite in use answers 409)."""
    return {
        (400, 422): schemas.Invalid,
        (401, 403, 404, *own, 413): schemas.Error,
        412: config_schemas.Stale,
    }


def delete_answers(*own: int) -> Refusals:
    """What a delete answers: 204 with no body, or its refusals (as `write_refusals`)."""
    return {
        204: None,
        400: schemas.Invalid,
        (401, 403, 404, *own): schemas.Error,
        412: config_schemas.Stale,
    }


def change_by(token: ApiToken, if_match: str = etags.ANY) -> Change:
    """Who changes: the token's user, its team the default of what they create. Call it
    in the database thread (the token's team is read)."""
    return Change(by=token.user, team=token.team, if_match=if_match)


def in_transaction(dry_run: bool, make: Callable[..., T], *args: object) -> T:
    """`make(*args)` in one transaction, rolled back when `dry_run`."""
    with transaction.atomic():
        made = make(*args)
        if dry_run:
            transaction.set_rollback(True)
    return made


def with_etag(response: HttpResponse, etag: str) -> None:
    response["ETag"] = etag
