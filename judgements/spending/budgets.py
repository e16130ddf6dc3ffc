"""Spending limits (models/budgets.Budget): what a team, a user or a panel has spent this
UTC day or month, counted from the stored LLM attempts and checks (so every worker
agrees), and the refusal of a new judgement or run the rest cannot cover.

A new start is estimated at the mean of its panel's last judgements, or, with no history,
at nine calls of `MAGI_LLM_MAX_TOKENS` each (prompt and answer alike, priced at the
dearer of the two); a budget in USD needs a price for every model counted. The check is
made before anything is stored, so a judgement already running is never cut off.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from django.contrib.auth.models import User
from django.db.models import Q, QuerySet, Sum
from django.utils import timezone

from judgements.core import pricing, rules
from judgements.core.errors import Refused
from judgements.models.agents import LLMAttempt
from judgements.models.budgets import Budget, BudgetPeriod
from judgements.models.checks import JudgementCheck
from judgements.models.judgements import Judgement
from judgements.models.magi_settings import magi_settings
from judgements.models.panels import Panel

RECENT = 20
CALLS = rules.PANEL_SIZE * rules.ROUNDS


@dataclass(frozen=True)
class Spend:
    tokens: int
    usd: float | None  # None: a model counted has no price


class BudgetExceeded(Refused):
    """Refused: the budget cannot cover the start; says which and when it resets."""

    status_code = 402

    def __init__(self, budget: Budget, resets_at: datetime, now: datetime, levels: int = 1) -> None:
        self.budget = budget
        self.resets_at = resets_at
        # A chain's start is estimated whole (docs/escalation.md): the refusal says so,
        # or a team reading "this start" would compare the budget with one level's cost.
        chain = (
            ""
            if levels == 1
            else f", estimated as if each of the {levels} levels of its escalation chain ran"
        )
        message = (
            f"Over budget: {describe(budget)} would be exceeded by this start{chain}; it "
            f"resets at {resets_at:%Y-%m-%d %H:%M} UTC."
        )
        super().__init__(message, max(int((resets_at - now).total_seconds()), 1))


def describe(budget: Budget) -> str:
    if budget.limit_usd is not None:
        limit = f"{budget.limit_usd.normalize():f} USD"
    else:
        limit = f"{budget.limit_tokens:,} tokens"
    return f"the budget of {limit} a {budget.period} for {budget.scope_words()}"


def period_bounds(period: str, now: datetime) -> tuple[datetime, datetime]:
    """The UTC day or month `now` is in: its start and when the next begins."""
    now = now.astimezone(UTC)
    start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == BudgetPeriod.DAY:
        return start, start + timedelta(days=1)
    start = start.replace(day=1)
    following = (start + timedelta(days=32)).replace(day=1)
    return start, following


def judgements_of(budget: Budget) -> QuerySet[Judgement]:
    if budget.team_id is not None:
        return Judgement.objects.filter(team_id=budget.team_id)
    if budget.user_id is not None:
        return Judgement.objects.filter(creator_id=budget.user_id)
    return Judgement.objects.filter(panel=budget.panel)


def tokens_by_model(judgements: QuerySet[Judgement], since: datetime) -> dict[str, dict[str, int]]:
    """Prompt, completion and cached tokens per model over the judgements' attempts and
    checks started since `since`."""
    totals: dict[str, dict[str, int]] = {}
    sums = {"prompt": Sum("prompt_tokens"), "completion": Sum("completion_tokens"),
            "cached": Sum("cached_tokens")}  # fmt: skip
    for rows in (
        LLMAttempt.objects.filter(agent__judgement__in=judgements, started_at__gte=since),
        JudgementCheck.objects.filter(judgement__in=judgements, started_at__gte=since),
    ):
        for row in rows.values("model").annotate(**sums):
            into = totals.setdefault(row["model"], {"prompt": 0, "completion": 0, "cached": 0})
            for key in ("prompt", "completion", "cached"):
                into[key] += row[key] or 0
    return totals


def spent(budget: Budget, now: datetime | None = None) -> Spend:
    start, _ = period_bounds(budget.period, now or timezone.now())
    tokens = tokens_by_model(judgements_of(budget), start)
    total = sum(t["prompt"] + t["completion"] for t in tokens.values())
    return Spend(total, pricing.usd(tokens, magi_settings.MAGI_MODEL_PRICES) if tokens else 0.0)


def estimate(panel: Panel | None, models: Sequence[str]) -> Spend:
    """One judgement's likely cost: the mean of the panel's last judgements, else nine
    calls at the configured maximum tokens."""
    if panel is not None:
        recent = list(
            Judgement.objects.filter(panel=panel, finished_at__isnull=False)
            .order_by("-finished_at")
            .values_list("pk", flat=True)[:RECENT]
        )
        if recent:
            history = Judgement.objects.filter(pk__in=recent)
            tokens = tokens_by_model(history, datetime.min.replace(tzinfo=UTC))
            total = sum(t["prompt"] + t["completion"] for t in tokens.values())
            usd = pricing.usd(tokens, magi_settings.MAGI_MODEL_PRICES) if tokens else 0.0
            return Spend(total // len(recent), None if usd is None else usd / len(recent))
    per_call = magi_settings.MAGI_LLM_MAX_TOKENS
    prices = magi_settings.MAGI_MODEL_PRICES
    if any(model not in prices for model in models):
        return Spend(CALLS * per_call, None)
    # Each agent's model answers three of the nine calls.
    calls_each = CALLS / max(len(models), 1)
    usd = sum(
        calls_each * per_call * max(prices[model]["prompt"], prices[model]["completion"])
        for model in models
    )
    return Spend(CALLS * per_call, usd / pricing.PER_MILLION)


def chain_estimate(first: Spend, later: Sequence[Panel]) -> Spend:
    """A story's estimate: its first level's, and every later level's as if it ran."""
    tokens, usd = first.tokens, first.usd
    for panel in later:
        each = estimate(panel, [agent["model"] for agent in panel.agents])
        tokens += each.tokens
        usd = None if usd is None or each.usd is None else usd + each.usd
    return Spend(tokens, usd)


def budgets_for(user: User | None, team_id: int | None, panel: Panel | None) -> QuerySet[Budget]:
    scope = Q(pk__in=[])
    if user is not None:
        scope |= Q(user=user)
    if team_id is not None:
        scope |= Q(team_id=team_id)
    if panel is not None:
        scope |= Q(panel=panel)
    return Budget.objects.filter(scope).select_related("team", "user", "panel")


def check(
    panel: Panel | None,
    models: Sequence[str],
    count: int,
    user: User | None,
    team_id: int | None,
    later: Sequence[Panel] = (),
) -> None:
    """BudgetExceeded when a budget that applies cannot cover the estimate of `count`
    judgements started from `panel` (or on `models` without one). `later`: the panels
    their story may escalate to (panels/escalation_chain.py): each start is estimated as if
    every level ran, and those panels' budgets apply too, so a story admitted is never
    cut off between levels."""
    if not count:
        return
    now = timezone.now()
    applying = list(budgets_for(user, team_id, panel))
    applying += [b for p in later for b in budgets_for(None, None, p) if b not in applying]
    if not applying:
        return
    each = chain_estimate(estimate(panel, models), later)
    for budget in applying:
        used = spent(budget, now)
        _, resets_at = period_bounds(budget.period, now)
        if budget.limit_tokens is not None:
            over = used.tokens + each.tokens * count > budget.limit_tokens
        elif budget.limit_usd is not None:
            # A price missing counts as over: a budget in money cannot vouch for it.
            over = (
                used.usd is None
                or each.usd is None
                or Decimal(str(used.usd + each.usd * count)) > budget.limit_usd
            )
        else:  # the constraint budget_one_limit rules this out
            over = False
        if over:
            raise BudgetExceeded(budget, resets_at, now, levels=1 + len(later))


@dataclass(frozen=True)
class State:
    """A budget as pages, the API and /metrics show it: spent so far this period, what is
    left (None where a price is missing) and when it resets."""

    budget: Budget
    spent: Spend
    left_tokens: int | None
    left_usd: float | None
    resets_at: datetime


def state_of(budget: Budget, now: datetime | None = None) -> State:
    now = now or timezone.now()
    used = spent(budget, now)
    _, resets_at = period_bounds(budget.period, now)
    left_tokens = left_usd = None
    if budget.limit_tokens is not None:
        left_tokens = max(budget.limit_tokens - used.tokens, 0)
    elif budget.limit_usd is not None and used.usd is not None:
        left_usd = max(float(budget.limit_usd) - used.usd, 0.0)
    return State(budget, used, left_tokens, left_usd, resets_at)
