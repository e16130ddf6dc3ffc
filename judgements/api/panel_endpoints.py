"""The API of saved panels as configuration.

    GET    /api/panels/        the panels a case may name, each whole, with its ETag
    POST   /api/panels/        a whole panel -> 201
    GET    /api/panels/<id>/   one panel, ETag header
    PUT    /api/panels/<id>/   If-Match; the whole panel -> 200, and the certificates voided
    DELETE /api/panels/<id>/   If-Match -> 204
    GET    /api/models/        the models an agent may name

Every change takes ?dry_run=true. The validation, the team rules and the audit are
configuration/panel_config.py's; a stale If-Match answers 412 (api/site.py).
"""

from typing import Annotated

from django.http import HttpRequest, HttpResponse
from ninja import Path, Router, Status

from judgements.api import config_schemas, schemas
from judgements.api.changes import (
    DryRun,
    IfMatch,
    change_by,
    delete_answers,
    in_transaction,
    with_etag,
    write_refusals,
)
from judgements.api.site import token_of
from judgements.configuration import panel_config, saving
from judgements.infrastructure.database import db_call
from judgements.intake import saved_panels
from judgements.llm import providers
from judgements.models import ApiToken
from judgements.outcome.answers import Panel

router = Router(tags=["configuration"])

PanelId = Annotated[int, Path(description="A panel's id.")]


def changed(written: saving.Written) -> config_schemas.PanelChange:
    answer = Panel.from_record(written.panel).model_dump()
    return config_schemas.PanelChange(**answer, voided_certificates=written.voided)


def create(token: ApiToken, fields: dict, dry_run: bool) -> config_schemas.PanelChange:
    return in_transaction(dry_run, lambda: changed(panel_config.create(change_by(token), fields)))


def replace(
    token: ApiToken, panel_id: int, fields: dict, if_match: str, dry_run: bool
) -> config_schemas.PanelChange:
    change = change_by(token, if_match)
    return in_transaction(dry_run, lambda: changed(panel_config.replace(change, panel_id, fields)))


def delete(token: ApiToken, panel_id: int, if_match: str, dry_run: bool) -> None:
    change = change_by(token, if_match)
    in_transaction(dry_run, lambda: panel_config.delete(change, panel_id))


def read(token: ApiToken, panel_id: int) -> Panel:
    return Panel.from_record(panel_config.visible_panel(panel_id, token.user))


@router.get(
    "/panels/", url_name="api-panels", response={200: schemas.PanelList, 401: schemas.Error}
)
async def list_panels(request: HttpRequest) -> dict:
    """The saved panels a case may name, each whole with its ETag: the caller's own, their
    teams' and the examples (staff: every panel), the caller's first."""
    return {"panels": await db_call(saved_panels.listing, for_request=True)(token_of(request).user)}


def model_listing() -> list[str]:
    return providers.available_models()


@router.get(
    "/models/", url_name="api-models", response={200: schemas.ModelList, 401: schemas.Error}
)
async def list_models(request: HttpRequest) -> dict:
    """The models this deployment can reach: what a panel's agents may name."""
    # In a thread: the first look at a discovering provider asks it (bounded by
    # MAGI_DISCOVERY_TIMEOUT), as the panel form's does.
    return {"models": await db_call(model_listing, for_request=True)()}


@router.post(
    "/panels/",
    url_name="api-panels",
    response={201: config_schemas.PanelChange, **write_refusals()},
)
async def create_panel(
    request: HttpRequest,
    body: config_schemas.PanelWrite,
    response: HttpResponse,
    dry_run: DryRun = False,
) -> Status[config_schemas.PanelChange]:
    """Create a panel owned by the caller: 201, its Location and ETag. 422 names each field
    at fault (`name`, `agents[1].model`, `reviewers`, `team`)."""
    token = token_of(request)
    answer = await db_call(create, for_request=True)(token, body.fields(), dry_run)
    response["Location"] = f"/api/panels/{answer.id}/"
    with_etag(response, answer.etag)
    return Status(201, answer)


@router.get(
    "/panels/{int:panel_id}/",
    url_name="api-panel",
    response={200: Panel, (401, 404): schemas.Error},
)
async def read_panel(request: HttpRequest, panel_id: PanelId, response: HttpResponse) -> Panel:
    """One panel, whole, with its ETag (the header and `etag`)."""
    answer = await db_call(read, for_request=True)(token_of(request), panel_id)
    with_etag(response, answer.etag)
    return answer


@router.put(
    "/panels/{int:panel_id}/",
    url_name="api-panel",
    response={200: config_schemas.PanelChange, **write_refusals()},
)
async def replace_panel(
    request: HttpRequest,
    panel_id: PanelId,
    body: config_schemas.PanelWrite,
    response: HttpResponse,
    if_match: IfMatch,
    dry_run: DryRun = False,
) -> config_schemas.PanelChange:
    """Make the panel exactly as the body says (a field left out: its default). Changing
    an agent's model or criteria voids its certificates: `voided_certificates` says which."""
    token = token_of(request)
    answer = await db_call(replace, for_request=True)(
        token, panel_id, body.fields(), if_match, dry_run
    )
    with_etag(response, answer.etag)
    return answer


@router.delete(
    "/panels/{int:panel_id}/",
    url_name="api-panel",
    response=delete_answers(),
)
async def delete_panel(
    request: HttpRequest, panel_id: PanelId, if_match: IfMatch, dry_run: DryRun = False
) -> Status[None]:
    """Delete the panel; the judgements started from it keep their copy of its agents."""
    await db_call(delete, for_request=True)(token_of(request), panel_id, if_match, dry_run)
    return Status(204, None)
