"""Teams: who shares panels, suites, API tokens, judgements and runs, and the audit of
who changed a team, a panel's reviewers or a budget.

A panel, a suite or a token may belong to a team; a judgement or a run started with a
team's panel or token belongs to it. Members see and use what their team owns; nobody
sees another team's. A user in no team sees what they made and the examples, as before
(the rules: models/policy.py).
"""

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.utils import timezone

from judgements.core import etags
from judgements.models.choices import ids_from_one

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class Team(models.Model):
    name = models.CharField(max_length=100, unique=True)
    members: "models.ManyToManyField[User, Membership]" = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="teams", blank=True
    )
    created_at = models.DateTimeField(default=timezone.now)
    # One more on every change of its name or members (judgements/configuration/versions.py).
    version = models.PositiveIntegerField(default=1)

    class Meta:
        constraints = [ids_from_one("team_id_from_one")]
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def member_names(self) -> list[str]:
        """Its members' usernames, sorted (through .all(): a prefetch serves a listing)."""
        return sorted(user.get_username() for user in self.members.all())

    def etag(self) -> str:
        state = {"name": self.name, "members": self.member_names()}
        return etags.etag("team", self.pk, self.version, state)


class Membership(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    added_at = models.DateTimeField(default=timezone.now)
    # A reviewer of every panel of the team, those given to it later included: the
    # identity provider's reviewer role (judgements/identity/people.py). Asked whenever
    # reviewers are wanted (models/policy.py panel_reviewers, reviewed_panels), never
    # copied onto panels, so a panel made or moved into the team has them at once.
    reviews_all = models.BooleanField(
        default=False,
        help_text="Reviews every panel of the team (the identity provider's reviewer role).",
    )

    class Meta:
        constraints = [
            ids_from_one("membership_id_from_one"),
            models.UniqueConstraint(fields=["team", "user"], name="membership_unique_per_team"),
        ]
        indexes = [models.Index(fields=["user", "team"], name="membership_user_team_idx")]

    def __str__(self) -> str:
        return f"{self.user} in {self.team}"


class AuditSubject(models.TextChoices):
    MEMBERSHIP = "membership", "Team membership"
    REVIEWERS = "reviewers", "Panel reviewers"
    BUDGET = "budget", "Budget"
    STAFF = "staff", "Staff role"
    PANEL = "panel", "Panel"
    SUITE = "suite", "Suite"
    TEAM = "team", "Team"
    USER = "user", "User"
    TOKEN = "token", "API token"
    SLACK = "slack", "Slack connection"


class AuditEntry(models.Model):
    """One change of who may see, review or spend, or of a panel, suite, team, user or
    token made over the API: who made it, when, what it was before and after. Written by
    the functions that make the change (judgements/configuration/teams.py), never edited."""

    subject = models.CharField(max_length=16, choices=AuditSubject.choices)
    # What changed, as "team 3", "panel 12", "budget 5": the row may be gone since.
    target = models.CharField(max_length=100)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="audit_entries",
        help_text="Empty: the operator's command line, or `actor` when it says who.",
    )
    # Who made the change when no MAGI user did: the identity provider (its issuer) that
    # a sign-in's groups came from.
    actor = models.CharField(max_length=255, blank=True, default="")
    at = models.DateTimeField(default=timezone.now)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [ids_from_one("audit_entry_id_from_one")]
        ordering = ["-at", "-pk"]
        verbose_name_plural = "audit entries"
        indexes = [models.Index(fields=["subject", "-at"], name="audit_subject_at_idx")]

    def __str__(self) -> str:
        return f"{self.get_subject_display()} of {self.target} at {self.at:%Y-%m-%d %H:%M}"
