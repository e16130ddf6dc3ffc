"""Changing who is in a team and who reviews a panel, each change audited (who, when,
before, after: models/teams.AuditEntry). The admin and `manage.py team` both change teams
through these functions, so nothing changes unrecorded."""

from typing import TypedDict

from django.contrib.auth.models import User
from django.db import transaction

from judgements.audit import record as chain_record
from judgements.core.errors import InvalidInput
from judgements.models import ApiToken, AuditEntry, AuditSubject, Membership, Panel, Suite, Team


class ReviewersState(TypedDict):
    """A panel's reviewing as the audit records it (a `reviewers` row naming the panel)."""

    team: str | None
    reviewers: list[str]
    team_reviews: bool
    four_eyes: bool


class TeamState(TypedDict):
    """A team as the audit records it (a `team` row); its members alone are a
    `membership` row's state, a list of usernames."""

    name: str
    members: list[str]


class AllPanelReviewers(TypedDict):
    """Who reviews every panel of a team, as a `reviewers` row naming the team records it
    (set_members, set_reviews_all; configuration/live_state.py reads it back)."""

    reviews_every_panel: list[str]


def member_names(team: Team) -> list[str]:
    return sorted(team.members.values_list("username", flat=True))


def reviewers_state(panel: Panel) -> ReviewersState:
    """What the audit records of a panel's reviewing: who, the whole team or not, four eyes."""
    return {
        "team": panel.team.name if panel.team_id is not None and panel.team else None,
        "reviewers": sorted(panel.reviewers.values_list("username", flat=True)),
        "team_reviews": panel.team_reviews,
        "four_eyes": panel.four_eyes,
    }


def record(
    subject: AuditSubject,
    target: str,
    by: User | None,
    before: object,
    after: object,
    actor: str = "",
) -> AuditEntry | None:
    """An audit entry for a change; none when nothing changed. `actor` names who made it
    when no user did (the identity provider whose groups a sign-in followed)."""
    if before == after:
        return None
    with transaction.atomic():
        entry = AuditEntry.objects.create(
            subject=subject, target=target, by=by, before=before, after=after, actor=actor
        )
        chain_record.configuration(entry)
    return entry


def team_state(team: Team) -> TeamState:
    """A team as the audit records it (team_config's rows, live_state's comparison)."""
    return {"name": team.name, "members": member_names(team)}


def team_target(team: Team) -> str:
    return f"team {team.pk} ({team.name})"


def panel_target(panel: Panel) -> str:
    return f"panel {panel.pk} ({panel.name})"


def set_members(team: Team, users: list[User], by: User | None, actor: str = "") -> None:
    """Make `users` the team's members, recording the change."""
    with transaction.atomic():
        before = member_names(team)
        reviewing = AllPanelReviewers(reviews_every_panel=all_panel_reviewers(team))
        wanted = {user.pk for user in users}
        Membership.objects.filter(team=team).exclude(user__in=wanted).delete()
        present = set(Membership.objects.filter(team=team).values_list("user_id", flat=True))
        Membership.objects.bulk_create(
            Membership(team=team, user_id=pk) for pk in sorted(wanted - present)
        )
        after = member_names(team)
        record(AuditSubject.MEMBERSHIP, team_target(team), by, before, after, actor)
        # A member who leaves stops reviewing every panel: said too (`reviewers`).
        still = AllPanelReviewers(reviews_every_panel=all_panel_reviewers(team))
        record(AuditSubject.REVIEWERS, team_target(team), by, reviewing, still, actor)


def all_panel_reviewers(team: Team) -> list[str]:
    """Who reviews every panel of the team (Membership.reviews_all), by username."""
    found = team.memberships.filter(reviews_all=True).values_list("user__username", flat=True)
    return sorted(found)


def set_reviews_all(
    team: Team, user: User, reviews: bool, by: User | None, actor: str = ""
) -> None:
    """Make a member a reviewer of every panel of the team, those given to it later
    included, or not; recorded. Nothing for someone who is not a member."""
    with transaction.atomic():
        before = AllPanelReviewers(reviews_every_panel=all_panel_reviewers(team))
        Membership.objects.filter(team=team, user=user).update(reviews_all=reviews)
        after = AllPanelReviewers(reviews_every_panel=all_panel_reviewers(team))
        record(AuditSubject.REVIEWERS, team_target(team), by, before, after, actor)


def add_members(team: Team, users: list[User], by: User | None) -> None:
    set_members(team, [*team.members.all(), *users], by)


def remove_members(team: Team, users: list[User], by: User | None) -> None:
    leaving = {user.pk for user in users}
    set_members(team, [user for user in team.members.all() if user.pk not in leaving], by)


def reviewing_errors(
    team: Team | None, reviewers: list[User], team_reviews: bool
) -> dict[str, list[str]]:
    """Why these reviewers cannot review a panel of `team`, by field: a panel with no team
    has no reviewers, and a reviewer must be a member of its team. The admin's panel form
    and set_reviewing ask the same."""
    if (reviewers or team_reviews) and team is None:
        return {"team": ["Give the panel a team first: its reviewers are its members."]}
    if team is None or not reviewers:
        return {}
    members = set(Membership.objects.filter(team=team).values_list("user_id", flat=True))
    outsiders = sorted(user.get_username() for user in reviewers if user.pk not in members)
    if outsiders:
        return {"reviewers": [f"Not in the team {team}: {', '.join(outsiders)}."]}
    return {}


def set_reviewing(
    panel: Panel,
    by: User | None,
    *,
    reviewers: list[User] | None = None,
    team_reviews: bool | None = None,
    four_eyes: bool | None = None,
    actor: str = "",
) -> None:
    """Who reviews the panel's judgements (members of its team only), whether its whole
    team does, and four eyes; what is not given stays. InvalidInput naming the field when
    a reviewer is not a member of the panel's team, or the panel has no team to review."""
    with transaction.atomic():
        before = reviewers_state(panel)
        errors = reviewing_errors(panel.team, reviewers or [], bool(team_reviews))
        if errors:
            raise InvalidInput(errors)
        if reviewers is not None:
            panel.reviewers.set(reviewers)
        if team_reviews is not None:
            panel.team_reviews = team_reviews
        if four_eyes is not None:
            panel.four_eyes = four_eyes
        panel.save(update_fields=["team_reviews", "four_eyes"])
        after = reviewers_state(panel)
        record(AuditSubject.REVIEWERS, panel_target(panel), by, before, after, actor)


def assign(thing: Panel | Suite | ApiToken, team: Team | None) -> None:
    """Give a panel, a suite or a token to a team (None: back to its owner alone). What
    it started before keeps the team it had."""
    thing.team = team
    thing.save(update_fields=["team"])
