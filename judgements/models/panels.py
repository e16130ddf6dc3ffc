"""Saved panels and suites: a user's own, and the examples shipped with MAGI."""

from typing import TYPE_CHECKING, TypedDict, TypeVar

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone

from judgements.core import etags
from judgements.models import policy
from judgements.models.choices import ids_from_one

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from judgements.models.teams import Team


_Shared = TypeVar("_Shared", bound="SharedWithExamples")


class StoredAgent(TypedDict):
    """One agent of a saved panel as its `agents` JSON holds it (validated as a case's
    agents are when the panel is saved): the one description of that shape."""

    name: str
    model: str
    criteria: str


AGENT_FIELDS = tuple(StoredAgent.__annotations__)


class SuiteState(TypedDict):
    """A suite as configuration, by names (Suite.config_state): its ETag hashes it, and
    its audit rows start with it (configuration/suite_config.py SuiteAuditState)."""

    name: str
    description: str
    owner: str | None
    team: str | None


class PanelState(TypedDict):
    """A panel as configuration, by names (Panel.config_state): the API answers it, its
    ETag hashes it and its audit rows hold it, keys in this order (the rows' hashes are in
    the transparency log, so the order is theirs)."""

    name: str
    description: str
    owner: str | None
    team: str | None
    agents: list[StoredAgent]  # the `agents` JSON as stored, validated when saved
    hold_contested: bool | None
    run_checks: bool | None
    prompt_variants: list[str] | None  # the `prompt_variants` JSON as stored
    escalate_to: str | None
    notify_contested: bool
    reviewers: list[str]
    team_reviews: bool
    four_eyes: bool


class SharedQuerySet(models.QuerySet[_Shared]):
    """Panels and suites: each user's own, and the examples shipped with MAGI (no owner)."""

    def visible_to(self, user: "User | None") -> "SharedQuerySet[_Shared]":
        """What the user may use: their own, their teams' and the examples; staff, and
        the operator's command line (user None), everything (policy.shared_rows_visible)."""
        return policy.shared_rows_visible(self, user)

    def editable_by(self, user: "User") -> "SharedQuerySet[_Shared]":
        """What the user may change: staff everything; anyone else their own and their
        teams' (policy.shared_rows_editable), as the row's editable_by says."""
        return policy.shared_rows_editable(self, user)


def owner_key(related_name: str) -> "models.ForeignKey[User | None, User | None]":
    """A panel's or a suite's owner: a user, or none for an example shipped with MAGI.
    Each model names its related_name ("panels", "suites") itself: "%(class)ss" on the
    abstract model would be recorded literally by migrations and need one of its own."""
    return models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name=related_name,
    )


def team_key(related_name: str, help_text: str) -> "models.ForeignKey[Team | None, Team | None]":
    """A panel's or a suite's team, whose members see it; a deleted team leaves it the
    owner's alone."""
    return models.ForeignKey(
        "judgements.Team",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name=related_name,
        help_text=help_text,
    )


class SharedWithExamples(models.Model):
    """What panels and suites share: a name unique per owner (per team for a team's), and
    an owner that is a user or none (an example shipped with MAGI, unique by name among
    the examples)."""

    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # One more on every change through MAGI's functions: the API's ETag and the
    # compare-and-swap that refuses a stale If-Match (judgements/configuration/versions.py).
    version = models.PositiveIntegerField(default=1)
    # Each model declares its own `owner` (a nullable foreign key to the user) so that its
    # related_name is spelled out ("panels", "suites"): "%(class)ss" here would be recorded
    # literally by migrations and need a migration of its own. Its column, for visible_to:
    owner_id: int | None

    objects = SharedQuerySet.as_manager()

    class Meta:
        abstract = True
        ordering = ["name", "id"]
        constraints = [
            ids_from_one("%(class)s_id_from_one"),
            # Outside a team, per owner; a team's are unique in the team instead (checked
            # as names compare, text.comparable_name: configuration/saving.py, suites.py), so
            # that two teams may each have their "Deploy gate", even made by one person.
            models.UniqueConstraint(
                fields=["owner", "name"],
                condition=models.Q(team__isnull=True),
                name="%(class)s_unique_name_per_owner",
            ),
            models.UniqueConstraint(
                fields=["name"],
                condition=models.Q(owner__isnull=True),
                name="%(class)s_unique_example_name",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    # Each subclass declares its `team` (a nullable foreign key), like its owner.
    team_id: int | None

    def visible_to(self, user: "User") -> bool:
        """The row-level twin of SharedQuerySet.visible_to."""
        return policy.shared_row_visible(user, self.owner_id, self.team_id)

    def editable_by(self, user: "User") -> bool:
        """Staff, its owner and the members of its team; an example only staff (the
        row-level twin of SharedQuerySet.editable_by)."""
        return policy.may_use(user, self.owner_id, self.team_id)


class Panel(SharedWithExamples):
    """A saved set of three agents to start judgements and evaluation runs from. Owned by
    a user; an example panel (shipped with MAGI, judgements/examples/panels/) has no owner and
    is visible to everyone. Agents are stored as validated JSON, in the shape a case's
    "agents" takes."""

    owner = owner_key("panels")
    team = team_key("panels", "Its members see and use it, and the judgements started with it.")
    # Who reviews its contested and held judgements besides staff: these members, or
    # every member of its team.
    reviewers = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="reviewed_panels"
    )
    team_reviews = models.BooleanField(
        default=False, help_text="Every member of its team reviews its judgements."
    )
    # "Four eyes": the author of a judgement is never its reviewer.
    four_eyes = models.BooleanField(
        default=False, help_text="Nobody may confirm or override a judgement they started."
    )
    # Held verdicts always tell the reviewers; contested ones only where the panel asks.
    notify_contested = models.BooleanField(
        default=False, help_text="Email its reviewers about contested verdicts too."
    )
    agents = models.JSONField(help_text='Three {"name", "model", "criteria"} objects.')
    # Hold contested verdicts of judgements started from it for a person; None: the
    # deployment's MAGI_HOLD_CONTESTED decides.
    hold_contested = models.BooleanField(null=True, blank=True)
    # Run the second opinion and the injection screen beside its judgements; None: the
    # deployment's MAGI_SECOND_OPINION and MAGI_INJECTION_SCREEN decide.
    run_checks = models.BooleanField(null=True, blank=True)
    # Its agents' learned approve offsets (judgements/core/calibration.py PanelCalibration
    # as a dict), read by judgements of the CALIBRATED variant; None: never learned.
    calibration = models.JSONField(null=True, blank=True)
    # The prompt variants its judgements and runs use (judgements/core/prompt_variants.py
    # names, validated by configuration/saving.py, kept in the order given); None: not set, the
    # site's default (panels/saved_panels.py variants_for), [] the prompts as first
    # measured whatever the default becomes.
    prompt_variants = models.JSONField(null=True, blank=True)
    # The saved panel a verdict this panel cannot keep (contested, or outside its
    # certificate) goes to before a person (docs/escalation.md); None: straight to a person.
    # Validated (a panel its team may use, no cycle) by configuration/escalation_config.py.
    escalate_to = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="escalated_from",
        help_text="The panel its unkept verdicts go to before a person.",
    )
    updated_at = models.DateTimeField(default=timezone.now)

    def get_absolute_url(self) -> str:
        return reverse("panel-edit", args=[self.pk])

    def stored_agents(self) -> list[StoredAgent]:
        """Its three agents, each with an agent's fields and no others."""
        return [
            StoredAgent(name=agent["name"], model=agent["model"], criteria=agent["criteria"])
            for agent in self.agents
        ]

    def config_state(self) -> PanelState:
        """What a panel is as configuration, by names (as the API answers it and the audit
        records it). Reads reviewers through .all(), so a prefetch serves a listing."""
        return {
            "name": self.name,
            "description": self.description,
            "owner": self.owner.get_username()
            if self.owner_id is not None and self.owner
            else None,
            "team": self.team.name if self.team_id is not None and self.team else None,
            "agents": self.agents,
            "hold_contested": self.hold_contested,
            "run_checks": self.run_checks,
            "prompt_variants": self.prompt_variants,
            "escalate_to": self.escalate_to.name
            if self.escalate_to_id is not None and self.escalate_to
            else None,
            "notify_contested": self.notify_contested,
            "reviewers": sorted(user.get_username() for user in self.reviewers.all()),
            "team_reviews": self.team_reviews,
            "four_eyes": self.four_eyes,
        }

    def etag(self) -> str:
        return etags.etag("panel", self.pk, self.version, self.config_state())

    def reviewed_by(self, user: "User") -> bool:
        """The row-level twin of reviewed_panels (policy.panel_reviewed_by)."""
        return policy.panel_reviewed_by(self, user)

    def reviewing_users(self) -> "models.QuerySet[User]":
        """Who reviews its judgements besides staff (policy.panel_reviewers)."""
        return policy.panel_reviewers(self)


class Suite(SharedWithExamples):
    """A named list of labelled cases to evaluate panels on (judgements/evaluations/suites.py reads
    and writes them as JSONL). Owned like a panel: no owner means shipped with MAGI."""

    owner = owner_key("suites")
    team = team_key("suites", "Its members see it and run panels on it.")

    def config_state(self) -> SuiteState:
        """Its name, description, owner and team, as its ETag hashes them. Its cases change
        only with a new version (judgements/configuration/suite_config.py), so a listing reads
        none of them."""
        return {
            "name": self.name,
            "description": self.description,
            "owner": self.owner.get_username()
            if self.owner_id is not None and self.owner
            else None,
            "team": self.team.name if self.team_id is not None and self.team else None,
        }

    def etag(self) -> str:
        return etags.etag("suite", self.pk, self.version, self.config_state())


def reviewed_panels(user: "User") -> models.QuerySet[Panel]:
    """The panels whose judgements `user` reviews (policy.reviewed_panels)."""
    return policy.reviewed_panels(Panel.objects.all(), user)
