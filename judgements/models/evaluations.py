"""An evaluation suite's cases and the runs of a panel over a suite."""

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone

from judgements.models import policy
from judgements.models.choices import Decision, ids_from_one
from judgements.models.panels import Panel, Suite

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class SuiteCase(models.Model):
    """One labelled case: the content, the right panel verdict and, optionally, the right
    final decision of each agent in order."""

    suite = models.ForeignKey(Suite, on_delete=models.CASCADE, related_name="cases")
    position = models.PositiveIntegerField()
    case_id = models.CharField(max_length=100, help_text='The case\'s "id" in the JSONL.')
    title = models.CharField(max_length=200, blank=True)
    content = models.TextField()
    expected = models.CharField(max_length=8, choices=Decision.choices)
    expected_agents = models.JSONField(null=True, blank=True)
    tags = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["suite", "position"]
        constraints = [
            ids_from_one("suite_case_id_from_one"),
            models.UniqueConstraint(fields=["suite", "case_id"], name="suitecase_unique_id"),
            models.UniqueConstraint(fields=["suite", "position"], name="suitecase_unique_position"),
        ]

    def __str__(self) -> str:
        return f"{self.suite.name}/{self.case_id}"


class EvaluationRunQuerySet(models.QuerySet["EvaluationRun"]):
    def visible_to(self, user: "User") -> "EvaluationRunQuerySet":
        """A user's own runs (staff: everyone's), with their suites."""
        return policy.made_rows_visible(self.select_related("suite"), user)


class EvaluationRun(models.Model):
    """A panel run over a suite, each case `repeats` times, as ordinary judgements linked
    to the run (Judgement.evaluation_run). The run is finished when they all are; the
    report is computed from them (evaluations/runs.py), never stored apart."""

    panel = models.ForeignKey(
        Panel, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    # The panel as it ran: a panel edited or deleted later changes no run.
    panel_name = models.CharField(max_length=100)
    agents = models.JSONField()
    suite = models.ForeignKey(Suite, on_delete=models.PROTECT, related_name="runs")
    # Its panel's team when it started: its judgements belong to the team too.
    team = models.ForeignKey(
        "judgements.Team", null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    repeats = models.PositiveSmallIntegerField(default=1)
    # The prompt variants its judgements run (judgements/core/prompt_variants.py).
    prompt_variants = models.JSONField(default=list, blank=True)
    # Beside each case, the plain calls of the same model: one told the three criteria and
    # the rule (the second opinion's) and one on each criterion, so the report shows
    # whether the panel and its agents earn their nine calls.
    plain_call = models.BooleanField(default=True)
    creator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="evaluation_runs",
    )
    created_at = models.DateTimeField(default=timezone.now)
    # Set by a cancel (transitions.cancel_run): its unfinished judgements ended in error.
    cancelled_at = models.DateTimeField(null=True, blank=True)
    cancelled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    objects = EvaluationRunQuerySet.as_manager()

    class Meta:
        constraints = [ids_from_one("evaluation_run_id_from_one")]
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["suite", "-created_at"], name="run_suite_created_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.panel_name} on {self.suite.name} (run {self.pk})"

    def get_absolute_url(self) -> str:
        return reverse("evaluation-run", args=[self.pk])

    def visible_to(self, user: "User") -> bool:
        """The row-level twin of EvaluationRunQuerySet.visible_to."""
        return policy.may_use(user, self.creator_id, self.team_id)
