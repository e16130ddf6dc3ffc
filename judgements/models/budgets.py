"""Spending limits: a budget in USD or in tokens, per team, per user or per panel, per
UTC day or month (judgements/spending/budgets.py counts the spend and refuses)."""

from typing import TypedDict

from django.conf import settings
from django.db import models
from django.utils import timezone

from judgements.core import etags
from judgements.models.choices import ids_from_one


class BudgetConfig(TypedDict):
    """A budget as configuration, by names (Budget.config_state): the API's answer reads
    its scope from it and its ETag hashes it, keys in this order. Its audit rows write
    configuration/budget_config.py's BudgetState instead."""

    team: str | None
    user: str | None
    panel: int | None
    period: str
    limit_usd: str | None  # normalized: 5 as typed and 5.0000 as stored are one limit
    limit_tokens: int | None


class BudgetPeriod(models.TextChoices):
    DAY = "day", "a day (UTC)"
    MONTH = "month", "a month (UTC)"


class Budget(models.Model):
    """At most `limit_usd` (priced by MAGI_MODEL_PRICES) or `limit_tokens` (prompt and
    completion) spent in each period by the judgements of one team, one user or one
    panel, counted from the stored LLM attempts and checks."""

    team = models.ForeignKey(
        "judgements.Team", null=True, blank=True, on_delete=models.CASCADE, related_name="budgets"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="budgets",
    )
    panel = models.ForeignKey(
        "judgements.Panel", null=True, blank=True, on_delete=models.CASCADE, related_name="budgets"
    )
    period = models.CharField(max_length=8, choices=BudgetPeriod.choices)
    limit_usd = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    limit_tokens = models.PositiveBigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # As a panel's (judgements/configuration/versions.py): the API's ETag and its compare-and-swap.
    version = models.PositiveIntegerField(default=1)

    class Meta:
        constraints = [
            ids_from_one("budget_id_from_one"),
            models.CheckConstraint(
                condition=(
                    models.Q(team__isnull=False, user__isnull=True, panel__isnull=True)
                    | models.Q(team__isnull=True, user__isnull=False, panel__isnull=True)
                    | models.Q(team__isnull=True, user__isnull=True, panel__isnull=False)
                ),
                name="budget_one_scope",
            ),
            models.CheckConstraint(
                condition=(
                    models.Q(limit_usd__isnull=False, limit_tokens__isnull=True)
                    | models.Q(limit_usd__isnull=True, limit_tokens__isnull=False)
                ),
                name="budget_one_limit",
            ),
        ]

    def __str__(self) -> str:
        limit = (
            f"{self.limit_usd} USD" if self.limit_usd is not None else f"{self.limit_tokens} tokens"
        )
        return f"{limit} {self.get_period_display()} for {self.scope_words()}"

    def scope_words(self) -> str:
        if self.team_id is not None:
            return f"the team {self.team}"
        if self.user_id is not None:
            return f"the user {self.user}"
        return f"the panel {self.panel}"

    def config_state(self) -> BudgetConfig:
        """What the budget is as configuration, by names (the API's answer and its ETag)."""
        return {
            "team": self.team.name if self.team_id is not None and self.team else None,
            "user": self.user.get_username() if self.user_id is not None and self.user else None,
            "panel": self.panel_id,
            "period": self.period,
            # Normalized: 5 as typed and 5.0000 as stored are one limit.
            "limit_usd": None if self.limit_usd is None else f"{self.limit_usd.normalize():f}",
            "limit_tokens": self.limit_tokens,
        }

    def etag(self) -> str:
        return etags.etag("budget", self.pk, self.version, self.config_state())
