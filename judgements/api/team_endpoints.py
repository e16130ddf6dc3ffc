"""The API of teams and people (docs/teams.md, docs/team-lead.md).

    GET    /api/teams/        the caller's teams (staff: all), with members and ETag
    POST   /api/teams/        staff: {"name", "members"} -> 201
    GET    /api/teams/<id>/   one team, ETag header
    PUT    /api/teams/<id>/   staff or a member, If-Match: {"name", "members"} -> 200
    DELETE /api/teams/<id>/   staff, If-Match -> 204
    GET    /api/users/        staff: every user, with their teams
    POST   /api/users/        staff: {"username", "email", "is_staff"} -> 201
    POST   /api/tokens/       staff: {"user", "name", "team"} -> 201, the key shown once

Every change takes ?dry_run=true; the rules, the audit and the versions are
configuration/team_config.py's and configuration/people.py's.
"""

from typing import Annotated, Any

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
from judgements.api.config_schemas import Team, TokenIssued, UserAnswer
from judgements.api.site import token_of
from judgements.configuration import people, team_config
from judgements.infrastructure.database import db_call

router = Router(tags=["configuration"])

TeamId = Annotated[int, Path(description="A team's id.")]
STAFF_ERRORS: dict[Any, Any] = {(400, 422): schemas.Invalid, (401, 403, 413): schemas.Error}


def listing(user: User) -> list[Team]:
    return [Team.from_record(team) for team in team_config.visible_teams(user)]


def read(user: User, team_id: int) -> Team:
    return Team.from_record(team_config.visible_team(team_id, user))


def create(user: User, fields: dict, dry_run: bool) -> Team:
    return in_transaction(dry_run, lambda: Team.from_record(team_config.create(user, fields)))


def replace(user: User, team_id: int, fields: dict, if_match: str, dry_run: bool) -> Team:
    def make() -> Team:
        return Team.from_record(team_config.replace(user, team_id, fields, if_match))

    return in_transaction(dry_run, make)


def delete(user: User, team_id: int, if_match: str, dry_run: bool) -> None:
    in_transaction(dry_run, lambda: team_config.delete(user, team_id, if_match))


@router.get(
    "/teams/", url_name="api-teams", response={200: config_schemas.TeamList, 401: schemas.Error}
)
async def list_teams(request: HttpRequest) -> dict:
    """The teams the caller is in (staff: every team), each with its members and ETag."""
    return {"teams": await db_call(listing, for_request=True)(token_of(request).user)}


@router.post("/teams/", url_name="api-teams", response={201: Team, **write_refusals()})
async def create_team(
    request: HttpRequest,
    body: config_schemas.TeamWrite,
    response: HttpResponse,
    dry_run: DryRun = False,
) -> Status[Team]:
    """Staff: a team and its members."""
    made = await db_call(create, for_request=True)(token_of(request).user, body.fields(), dry_run)
    response["Location"] = f"/api/teams/{made.id}/"
    with_etag(response, made.etag)
    return Status(201, made)


@router.get(
    "/teams/{int:team_id}/", url_name="api-team", response={200: Team, (401, 404): schemas.Error}
)
async def read_team(request: HttpRequest, team_id: TeamId, response: HttpResponse) -> Team:
    """One team the caller is in (staff: any), with its ETag."""
    found = await db_call(read, for_request=True)(token_of(request).user, team_id)
    with_etag(response, found.etag)
    return found


@router.put("/teams/{int:team_id}/", url_name="api-team", response={200: Team, **write_refusals()})
async def replace_team(
    request: HttpRequest,
    team_id: TeamId,
    body: config_schemas.TeamWrite,
    response: HttpResponse,
    if_match: IfMatch,
    dry_run: DryRun = False,
) -> Team:
    """Its members, all of them (staff or a member; only staff rename it, and a member
    may not take themselves out). A reviewer taken out stops reviewing its panels."""
    changed = await db_call(replace, for_request=True)(
        token_of(request).user, team_id, body.fields(), if_match, dry_run
    )
    with_etag(response, changed.etag)
    return changed


@router.delete(
    "/teams/{int:team_id}/",
    url_name="api-team",
    response=delete_answers(),
)
async def delete_team(
    request: HttpRequest, team_id: TeamId, if_match: IfMatch, dry_run: DryRun = False
) -> Status[None]:
    """Staff: delete the team; its panels, suites and tokens stay their owners'."""
    await db_call(delete, for_request=True)(token_of(request).user, team_id, if_match, dry_run)
    return Status(204, None)


# --- people ------------------------------------------------------------------------------


def user_listing(user: User) -> list[UserAnswer]:
    return [UserAnswer.from_record(found) for found in people.listing(user)]


def user_made(by: User, body: config_schemas.UserCreate, dry_run: bool) -> UserAnswer:
    def make() -> UserAnswer:
        made = people.create_user(by, body.username, body.email, body.is_staff)
        return UserAnswer.from_record(made)

    return in_transaction(dry_run, make)


def token_issued(by: User, body: config_schemas.TokenCreate, dry_run: bool) -> TokenIssued:
    def issue() -> TokenIssued:
        issued = people.issue_token(by, body.user, body.name, body.team)
        token = issued.token
        # A dry run issues nothing: no key to show, not even one that would not work.
        return TokenIssued(
            id=token.pk, name=token.name, prefix=token.prefix, user=body.user, team=body.team,
            key="" if dry_run else issued.key,
        )  # fmt: skip

    return in_transaction(dry_run, issue)


@router.get(
    "/users/",
    url_name="api-users",
    response={200: config_schemas.UserList, (401, 403): schemas.Error},
)
async def list_users(request: HttpRequest) -> dict:
    """Staff: every user, with their email address and teams."""
    return {"users": await db_call(user_listing, for_request=True)(token_of(request).user)}


@router.post("/users/", url_name="api-users", response={201: UserAnswer, **STAFF_ERRORS})
async def create_user(
    request: HttpRequest,
    body: config_schemas.UserCreate,
    response: HttpResponse,
    dry_run: DryRun = False,
) -> Status[UserAnswer]:
    """Staff: a user with an email address and no password (a person sets one with
    `manage.py changepassword`; a bot uses a token)."""
    made = await db_call(user_made, for_request=True)(token_of(request).user, body, dry_run)
    response["Location"] = "/api/users/"
    return Status(201, made)


@router.post("/tokens/", url_name="api-tokens", response={201: TokenIssued, **STAFF_ERRORS})
async def create_token(
    request: HttpRequest, body: config_schemas.TokenCreate, dry_run: DryRun = False
) -> Status[TokenIssued]:
    """Staff: an API token of a user's, a team's when `team` is given (what it starts is
    the team's). The key is in this answer only (a dry run's is empty: nothing issued)."""
    issued = await db_call(token_issued, for_request=True)(token_of(request).user, body, dry_run)
    return Status(201, issued)
