"""Who may see, use, edit and review what: MAGI's access rules, in one place.

Staff see everything. Anyone else sees what they made and what their teams own (a
judgement, a run, a panel, a suite belongs to a team through its panel, token or run:
intake/rows.py team_for), and the examples shipped with MAGI; the teams they are in; the
budgets of themselves, their teams and the panels they may use. A judgement is confirmed
or overridden by staff and holders of the override permission (what they see) and by its
panel's reviewers; on a four-eyes panel never by the person who started it.

Each rule is asked two ways: as a condition the querysets filter by (the history list,
the review queue and the API ask the database), and as one row answers it (a page, a
websocket). The querysets and models keep their methods (`Judgement.objects.visible_to`,
`judgement.review_refusal`, `Panel.editable_by`, ...), which ask these functions; the
admin's team scoping (admin/base.py TeamScoped) asks `made_or_shared` too.
"""

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from django.db import models

from judgements.models.choices import ReviewRefusal
from judgements.models.teams import Membership

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

Rows = TypeVar("Rows", bound="models.QuerySet[Any, Any]")


# What the rules read of a panel and a judgement (models/panels.py Panel,
# models/judgements.py Judgement, whose methods ask these rules: named here by what they
# hold, so that the rules need neither module).
class Panel(Protocol):
    @property
    def team_id(self) -> int | None: ...
    @property
    def team_reviews(self) -> bool: ...
    @property
    def four_eyes(self) -> bool: ...
    @property
    def reviewers(self) -> "models.Manager[User]": ...


class Judgement(Protocol):
    @property
    def panel(self) -> Panel | None: ...
    @property
    def creator_id(self) -> int | None: ...
    @property
    def team_id(self) -> int | None: ...


OVERRIDE_PERMISSION = "judgements.override_judgement"


# --- teams: the one rule every shared row asks ---------------------------------------


def team_ids_of(user: "User") -> "models.QuerySet[Membership, Mapping[str, object]]":
    """The ids of the teams `user` is in, as a subquery (no query of its own)."""
    return Membership.objects.filter(user=user).values("team_id")


def in_team(user: "User", team_id: int | None) -> bool:
    """Whether `user` is a member of the row's team (None: the row has none)."""
    return team_id is not None and user.teams.filter(pk=team_id).exists()


def may_use(user: "User", maker_id: int | None, team_id: int | None) -> bool:
    """Staff, the row's maker (`maker_id`: its creator or owner) and its team's members."""
    if user.is_staff or (maker_id is not None and maker_id == user.pk):
        return True
    return in_team(user, team_id)


def made_or_shared(user: "User", maker: str, team: str = "team") -> models.Q:
    """may_use as a condition for everyone but staff (who see every row): the rows whose
    field `maker` is `user`, and those whose `team` is one of `user`'s teams."""
    return models.Q(**{maker: user}) | models.Q(**{f"{team}__in": team_ids_of(user)})


# --- what a user sees ----------------------------------------------------------------


def made_rows_visible(rows: Rows, user: "User") -> Rows:
    """Judgements and runs: staff all; anyone else what they started and their teams'."""
    if user.is_staff:
        return rows
    return rows.filter(made_or_shared(user, "creator"))


def shared_rows_visible(rows: Rows, user: "User | None") -> Rows:
    """Panels and suites: their own, their teams' and the examples (no owner, no team);
    staff, and the operator's command line (user None), everything."""
    if user is None or user.is_staff:
        return rows
    return rows.filter(
        made_or_shared(user, "owner") | models.Q(owner__isnull=True, team__isnull=True)
    )


def shared_rows_editable(rows: Rows, user: "User") -> Rows:
    """may_use as a condition, for panels and suites: staff all; anyone else their own
    and their teams' (an example, no owner and no team, only staff)."""
    if user.is_staff:
        return rows
    return rows.filter(made_or_shared(user, "owner"))


def teams_visible(teams: Rows, user: "User") -> Rows:
    """The teams `user` is in; staff every team."""
    if user.is_staff:
        return teams
    return teams.filter(pk__in=team_ids_of(user))


def budgets_visible(budgets: Rows, user: "User", panels: "models.QuerySet[models.Model]") -> Rows:
    """The budgets `user` may read: staff all; anyone else their own, their teams' and
    those of the panels (of `panels`) they may use."""
    if user.is_staff:
        return budgets
    return budgets.filter(
        models.Q(user=user)
        | models.Q(team__in=team_ids_of(user))
        | models.Q(panel__in=shared_rows_visible(panels, user).values("pk"))
    )


def shared_row_visible(user: "User", owner_id: int | None, team_id: int | None) -> bool:
    """The row-level twin of shared_rows_visible: an example is everyone's."""
    if owner_id is None and team_id is None:
        return True
    return may_use(user, owner_id, team_id)


# --- who reviews ---------------------------------------------------------------------


def overrides_what_they_see(user: "User | AnonymousUser") -> bool:
    """Staff and holders of the override permission review every judgement they see."""
    return user.is_staff or user.has_perm(OVERRIDE_PERMISSION)


def reviewed_panels(panels: Rows, user: "User") -> Rows:
    """Of `panels`, those whose judgements `user` reviews: a member of the panel's team
    who is named as its reviewer, any member where the whole team reviews, and every panel
    of a team `user` reviews all of (Membership.reviews_all), whenever the panel joined
    it. (A reviewer who leaves the team stops reviewing with it.)"""
    named = panels.model.reviewers.through.objects.filter(user=user).values("panel_id")
    all_of = Membership.objects.filter(user=user, reviews_all=True).values("team_id")
    return panels.filter(team__in=team_ids_of(user)).filter(
        models.Q(pk__in=named) | models.Q(team_reviews=True) | models.Q(team__in=all_of)
    )


def panel_reviewers(panel: Panel) -> "models.QuerySet[User]":
    """Who reviews a panel's judgements besides staff, as reviewed_panels rules: the
    members of its team named as its reviewers, every member where the whole team
    reviews, and the team's reviewers of every panel (Membership.reviews_all: asked here,
    never copied onto the panel, so a panel given to the team later has them too)."""
    users = panel.reviewers.model.objects  # the user model, as the many-to-many names it
    if panel.team_id is None:
        return users.none()
    memberships = Membership.objects.filter(team_id=panel.team_id)
    members = users.filter(pk__in=memberships.values("user_id"))
    if panel.team_reviews:
        return members
    return members.filter(
        models.Q(pk__in=panel.reviewers.values("pk"))
        | models.Q(pk__in=memberships.filter(reviews_all=True).values("user_id"))
    )


def panel_reviewed_by(panel: Panel, user: "User") -> bool:
    """The row-level twin of reviewed_panels."""
    if not in_team(user, panel.team_id):
        return False
    return panel_reviewers(panel).filter(pk=user.pk).exists()


def reviewable_rows(
    judgements: Rows, user: "User", reviewed: "models.QuerySet[models.Model]"
) -> Rows:
    """Of `judgements`, what `user` may confirm or override: staff and holders of the
    override permission what they see, a panel's reviewers (`reviewed`: reviewed_panels)
    its judgements; on a four-eyes panel nobody their own."""
    if overrides_what_they_see(user):
        found = made_rows_visible(judgements, user)
    else:
        found = judgements.filter(panel__in=reviewed.values("pk"))
    return found.exclude(creator=user, panel__four_eyes=True)


def review_refusal(judgement: Judgement, user: "User") -> ReviewRefusal | None:
    """Why `user` may not confirm or override `judgement` (None: they may), the row-level
    twin of reviewable_rows: four eyes (they started it, on a four-eyes panel), or not a
    reviewer."""
    panel = judgement.panel
    if panel is not None and panel.four_eyes and judgement.creator_id == user.pk:
        return ReviewRefusal.FOUR_EYES
    if overrides_what_they_see(user):
        allowed = may_use(user, judgement.creator_id, judgement.team_id)
    else:
        allowed = panel is not None and panel_reviewed_by(panel, user)
    return None if allowed else ReviewRefusal.NOT_A_REVIEWER
