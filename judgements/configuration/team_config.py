"""Teams created, changed and deleted as configuration (the API's /api/teams/): their
names and members, versioned for If-Match and audited with who made the change.

Who may: staff create, rename and delete teams; staff and the team's own members change
its members (so a team's bot applies its team file), but a member may not take
themselves out (staff may), which would leave the caller outside what it just changed.
Another team is not found, as docs/teams.md says.
"""

from typing import NotRequired, TypedDict

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from judgements.configuration import deletions, names, teams, versions
from judgements.core import etags, text
from judgements.core.errors import Forbidden, InvalidInput, NotFound
from judgements.models import AuditSubject, Team, is_id, policy

STAFF_ONLY = "Only staff create, rename and delete teams."
NAME_TAKEN = "There is already a team called {name!r}."


def visible_teams(by: User) -> "QuerySet[Team]":
    """The teams `by` is in (staff: every team), with their members."""
    found = policy.teams_visible(Team.objects.all(), by)
    return found.prefetch_related("members").order_by("name")


def visible_team(team_id: int, by: User) -> Team:
    team = visible_teams(by).filter(pk=team_id).first() if is_id(team_id) else None
    if team is None:
        raise NotFound(f"No team {team_id}.")
    return team


state = teams.team_state  # a team as the audit records it


class TeamFields(TypedDict):
    """A team as written (api/config_schemas.py TeamWrite, the admin, the command line):
    its name and, when given, every member by username."""

    name: str
    members: NotRequired[list[str]]


def create(by: User | None, body: TeamFields, actor: str = "") -> Team:
    """The one way a team is made, audited: by staff (the API, the admin), the operator's
    command line (`by` None, `manage.py team create`) or an identity provider (`by` None,
    `actor` its issuer: a sign-in's groups name a team MAGI lacks). With these members;
    InvalidInput names `name` or `members`."""
    if by is not None and not by.is_staff:
        raise Forbidden(STAFF_ONLY)
    members = members_of(body.get("members", []))
    if Team.objects.filter(name=body["name"]).exists():
        raise InvalidInput({"name": [NAME_TAKEN.format(name=text.escaped(body["name"]))]})
    try:
        with transaction.atomic():
            team = Team.objects.create(name=body["name"])
            teams.set_members(team, members, by, actor)
            teams.record(AuditSubject.TEAM, teams.team_target(team), by, None, state(team), actor)
    except IntegrityError:  # another request took the name a moment ago
        raise InvalidInput({"name": [NAME_TAKEN.format(name=body["name"])]}) from None
    return team if by is None else visible_team(team.pk, by)


def provided(name: str, actor: str) -> Team:
    """The team a sign-in's groups name (MAGI_OIDC_GROUPS), made the first time through
    `create` with the provider `actor` as its author."""
    found = Team.objects.filter(name=name).first()
    if found is not None:
        return found
    try:
        return create(None, {"name": name}, actor)
    except InvalidInput:  # another sign-in made it a moment ago
        return Team.objects.get(name=name)


def replace(by: User, team_id: int, body: TeamFields, if_match: str) -> Team:
    """The team's name and members made as `body` says, if it is still as read."""
    with transaction.atomic():
        team = visible_team(team_id, by)
        if body["name"] != team.name and not by.is_staff:
            raise Forbidden(STAFF_ONLY)
        etags.check(if_match, "team", team.etag())
        members = members_of(body.get("members", []))
        if not by.is_staff and by.pk not in {user.pk for user in members}:
            raise InvalidInput({"members": [f"You would leave the team {team.name}: only staff "
                                            "may take you out."]})  # fmt: skip
        if team.name != body["name"] and Team.objects.filter(name=body["name"]).exists():
            raise InvalidInput({"name": [NAME_TAKEN.format(name=text.escaped(body["name"]))]})
        before = state(team)
        versions.bump(Team.objects, team.pk, team.version, "team", name=body["name"])
        team.refresh_from_db()
        teams.set_members(team, members, by)
        teams.record(AuditSubject.TEAM, teams.team_target(team), by, before, state(team))
        return visible_team(team.pk, by)


def delete(by: User, team_id: int, if_match: str) -> None:
    """Staff: delete the team. What it owned goes back to its owners alone; what it
    judged keeps saying it was the team's (by id in the audit)."""
    with transaction.atomic():
        team = visible_team(team_id, by)
        if not by.is_staff:
            raise Forbidden(STAFF_ONLY)
        etags.check(if_match, "team", team.etag())
        before, target = state(team), teams.team_target(team)
        # Its budgets go with it, its panels, suites and tokens are theirs alone again:
        # each audited, so audit verify finds none of them changed unexplained.
        with deletions.audited([team], by, skip=[team]):
            if not Team.objects.filter(pk=team.pk, version=team.version).delete()[0]:
                raise etags.Stale("team", None)
        teams.record(AuditSubject.TEAM, target, by, before, None)


def members_of(usernames: list[str]) -> list[User]:
    users, unknown = names.users_named(usernames)
    if unknown:
        raise InvalidInput({"members": [names.no_users(unknown)]})
    return users
