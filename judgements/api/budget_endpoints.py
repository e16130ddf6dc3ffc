"""The API of spending limits (docs/teams.md).

    GET    /api/budgets/        the budgets the caller may read, with spend and ETag
    POST   /api/budgets/        staff: a budget -> 201
    GET    /api/budgets/<id>/   one budget, ETag header
    PUT    /api/budgets/<id>/   staff, If-Match: the whole budget -> 200
    DELETE /api/budgets/<id>/   staff, If-Match -> 204

Every change takes ?dry_run=true; validation (the admin's form), the audit and the
version are configuration/budget_config.py's.
"""

from typing import Annotated

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from ninja import Path, Router, Status

from judgements.api import config_schemas, schemas
from judgements.api.changes import (
    DryRun,
    IfMatch,
    delete_answers,
    in_transaction,
    with_etag,
    write_refusals,
)
from judgements.api.site import token_of
from judgements.configuration import budget_config
from judgements.infrastructure.database import db_call
from judgements.intake import budgets
from judgements.models import Budget

router = Router(tags=["configuration"])

BudgetId = Annotated[int, Path(description="A budget's id.")]


def answer(budget: Budget) -> schemas.Budget:
    return schemas.Budget.from_state(budgets.state_of(budget))


def listing(user: User) -> list[schemas.Budget]:
    return [answer(budget) for budget in budgets.visible_to(user).order_by("pk")]


def create(user: User, fields: dict, dry_run: bool) -> schemas.Budget:
    return in_transaction(dry_run, lambda: answer(budget_config.create(user, fields)))


def replace(
    user: User, budget_id: int, fields: dict, if_match: str, dry_run: bool
) -> schemas.Budget:
    def make() -> schemas.Budget:
        return answer(budget_config.replace(user, budget_id, fields, if_match))

    return in_transaction(dry_run, make)


def delete(user: User, budget_id: int, if_match: str, dry_run: bool) -> None:
    in_transaction(dry_run, lambda: budget_config.delete(user, budget_id, if_match))


def read(user: User, budget_id: int) -> schemas.Budget:
    return answer(budget_config.visible_budget(budget_id, user))


@router.get(
    "/budgets/", url_name="api-budgets", response={200: schemas.BudgetList, 401: schemas.Error}
)
async def list_budgets(request: HttpRequest) -> dict:
    """The spending limits the caller may read (their own, their teams' and those of the
    panels they may use; staff: all), with what each has spent and has left."""
    user = token_of(request).user
    return {"budgets": await db_call(listing, for_request=True)(user)}


@router.post(
    "/budgets/", url_name="api-budgets", response={201: schemas.Budget, **write_refusals()}
)
async def create_budget(
    request: HttpRequest,
    body: config_schemas.BudgetWrite,
    response: HttpResponse,
    dry_run: DryRun = False,
) -> Status[schemas.Budget]:
    """Staff: a budget for a team, a user or a panel (by name; a panel by id or name)."""
    user = token_of(request).user
    made = await db_call(create, for_request=True)(user, body.fields(), dry_run)
    response["Location"] = f"/api/budgets/{made.id}/"
    with_etag(response, made.etag)
    return Status(201, made)


@router.get(
    "/budgets/{int:budget_id}/",
    url_name="api-budget",
    response={200: schemas.Budget, (401, 404): schemas.Error},
)
async def read_budget(
    request: HttpRequest, budget_id: BudgetId, response: HttpResponse
) -> schemas.Budget:
    """One budget, with what it has spent and its ETag."""
    found = await db_call(read, for_request=True)(token_of(request).user, budget_id)
    with_etag(response, found.etag)
    return found


@router.put(
    "/budgets/{int:budget_id}/",
    url_name="api-budget",
    response={200: schemas.Budget, **write_refusals()},
)
async def replace_budget(
    request: HttpRequest,
    budget_id: BudgetId,
    body: config_schemas.BudgetWrite,
    response: HttpResponse,
    if_match: IfMatch,
    dry_run: DryRun = False,
) -> schemas.Budget:
    """Staff: make the budget exactly as the body says."""
    user = token_of(request).user
    changed = await db_call(replace, for_request=True)(
        user, budget_id, body.fields(), if_match, dry_run
    )
    with_etag(response, changed.etag)
    return changed


@router.delete(
    "/budgets/{int:budget_id}/",
    url_name="api-budget",
    response=delete_answers(),
)
async def delete_budget(
    request: HttpRequest, budget_id: BudgetId, if_match: IfMatch, dry_run: DryRun = False
) -> Status[None]:
    """Staff: remove the budget."""
    await db_call(delete, for_request=True)(token_of(request).user, budget_id, if_match, dry_run)
    return Status(204, None)
