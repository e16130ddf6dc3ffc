"""What operators watch, in the Prometheus format: every figure is read from the database
when Prometheus scrapes, so any web process answers for the whole deployment, however
many web and worker processes run (no per-process counters to add up, nothing lost when
a process restarts). Counters are totals over the records kept; histograms are built
with one aggregate query each."""

from collections.abc import Iterator, Sequence
from datetime import timedelta
from typing import Any, TypeVar

from django.db.models import (
    Count,
    DurationField,
    ExpressionWrapper,
    F,
    Min,
    Model,
    Q,
    QuerySet,
    Sum,
)
from django.db.models.expressions import Combinable
from django.utils import timezone
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
)
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from judgements.core import pricing
from judgements.models import (
    Budget,
    DeliveryStatus,
    Judgement,
    LLMAttempt,
    Status,
    WebhookDelivery,
)
from judgements.models.magi_settings import magi_settings
from judgements.spending import budgets

VERDICT_BUCKETS = (5, 15, 30, 60, 120, 300, 600, 1800)
CALL_BUCKETS = (0.25, 0.5, 1, 2, 5, 10, 30, 60, 120)
# What a histogram's values are counted in: a duration, or a number of a unit (1000: ms).
Unit = TypeVar("Unit", timedelta, int)
TOKEN_KINDS = (
    ("prompt", "prompt_tokens"),
    ("cached", "cached_tokens"),
    ("completion", "completion_tokens"),
)


class DatabaseCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        yield from judgements()
        yield from queue()
        yield time_to_verdict()
        yield from llm_calls()
        yield takeovers()
        yield webhook_deliveries()
        yield from spending()


def kind_of(evaluation_run_id: int | None) -> str:
    return "person" if evaluation_run_id is None else "evaluation"


def judgements() -> Iterator[GaugeMetricFamily]:
    family = GaugeMetricFamily(
        "magi_judgements",
        "Judgements by status and by who started them.",
        labels=["status", "kind"],
    )
    totals: dict[tuple[str, str], int] = {}
    by_run = Judgement.objects.values("status", "evaluation_run").annotate(n=Count("pk"))
    for row in by_run.order_by():
        key = (row["status"], kind_of(row["evaluation_run"]))
        totals[key] = totals.get(key, 0) + row["n"]
    for status in Status.values:
        if status == Status.HELD:
            continue  # a verdict in force, never a stored status
        for kind in ("person", "evaluation"):
            family.add_metric([status, kind], totals.get((status, kind), 0))
    yield family


def queue() -> Iterator[GaugeMetricFamily]:
    queued = Judgement.objects.filter(status=Status.IDLE)
    depth = GaugeMetricFamily("magi_queue_depth", "Judgements waiting for a worker.")
    depth.add_metric([], queued.count())
    yield depth
    oldest = queued.aggregate(oldest=Min("created_at"))["oldest"]
    age = GaugeMetricFamily(
        "magi_oldest_queued_seconds", "How long the oldest waiting judgement has waited."
    )
    age.add_metric([], 0 if oldest is None else (timezone.now() - oldest).total_seconds())
    yield age


def histogram(
    name: str,
    doc: str,
    rows: "QuerySet[Model]",
    value: Combinable,
    buckets: Sequence[float],
    labels: Sequence[str],
    unit: Unit,
) -> HistogramMetricFamily:
    """A histogram from one aggregate per label set. `value` is an expression over `rows`
    in `unit`s (a timedelta, or a number of milliseconds); `buckets` are in seconds."""
    family = HistogramMetricFamily(name, doc, labels=list(labels))
    filters = {
        f"le_{i}": Count("pk", filter=Q(value__lte=bound * unit)) for i, bound in enumerate(buckets)
    }
    grouped = rows.annotate(value=value).values(*labels)
    for row in grouped.annotate(n=Count("pk"), total=Sum("value"), **filters).order_by():
        counts: list[tuple[str, float]] = [
            (str(bound), row[f"le_{i}"]) for i, bound in enumerate(buckets)
        ]
        total = (row["total"] or 0 * unit) / unit
        family.add_metric([row[label] for label in labels], [*counts, ("+Inf", row["n"])], total)
    return family


def time_to_verdict() -> HistogramMetricFamily:
    finished = Judgement.objects.filter(
        status__in=(Status.APPROVED, Status.REJECTED), finished_at__isnull=False
    )
    waited = ExpressionWrapper(F("finished_at") - F("created_at"), output_field=DurationField())
    return histogram(
        "magi_time_to_verdict_seconds",
        "From a judgement's creation to its verdict (approved or rejected).",
        finished,
        waited,
        VERDICT_BUCKETS,
        labels=("status",),
        unit=timedelta(seconds=1),
    )


def llm_calls() -> Iterator[Metric]:
    attempts = LLMAttempt.objects.values("provider", "model", "outcome").order_by()
    calls = CounterMetricFamily(
        "magi_llm_calls",
        "LLM calls (every attempt) by provider, model and outcome.",
        labels=["provider", "model", "outcome"],
    )
    for row in attempts.annotate(n=Count("pk")):
        calls.add_metric([row["provider"], row["model"], row["outcome"]], row["n"])
    yield calls
    retries = CounterMetricFamily(
        "magi_llm_retries",
        "Attempts after the first of a decision (failures retried, answers asked again).",
        labels=["provider", "model"],
    )
    per_model = LLMAttempt.objects.values("provider", "model").order_by()
    for row in per_model.annotate(n=Count("pk", filter=Q(attempt__gt=1))):
        retries.add_metric([row["provider"], row["model"]], row["n"])
    yield retries
    yield histogram(
        "magi_llm_call_duration_seconds",
        "How long each LLM call took.",
        LLMAttempt.objects.all(),
        F("duration_ms"),
        CALL_BUCKETS,
        labels=("provider", "model"),
        unit=1000,  # milliseconds in a second
    )
    tokens = CounterMetricFamily(
        "magi_llm_tokens",
        "Tokens the providers reported, by kind.",
        labels=["provider", "model", "kind"],
    )
    cost = CounterMetricFamily(
        "magi_llm_cost_usd",
        "What the calls cost, for models MAGI_MODEL_PRICES prices.",
        labels=["provider", "model"],
    )
    sums = {kind: Sum(field) for kind, field in TOKEN_KINDS}
    for row in per_model.annotate(**sums):
        for kind, _ in TOKEN_KINDS:
            tokens.add_metric([row["provider"], row["model"], kind], row[kind] or 0)
        price = magi_settings.MAGI_MODEL_PRICES.get(row["model"])
        if price is not None:
            cost.add_metric([row["provider"], row["model"]], usd(row, price))
    yield tokens
    yield cost


def usd(row: dict[str, Any], price: pricing.Price) -> float:
    """Per million tokens (core/pricing.py); cached prompt tokens at the cached price."""
    counts = {key: row[key] for key in ("prompt", "cached", "completion")}
    return pricing.usd({"model": counts}, {"model": price}) or 0.0


def takeovers() -> CounterMetricFamily:
    family = CounterMetricFamily(
        "magi_lease_takeovers",
        "Judgements claimed from a worker whose lease ran out (a dead worker, an outage).",
    )
    family.add_metric([], Judgement.objects.aggregate(n=Sum("takeovers"))["n"] or 0)
    return family


def webhook_deliveries() -> GaugeMetricFamily:
    family = GaugeMetricFamily(
        "magi_webhook_deliveries", "Webhook deliveries by status.", labels=["status"]
    )
    counts = dict(WebhookDelivery.objects.values_list("status").annotate(n=Count("pk")).order_by())
    for status in DeliveryStatus.values:
        family.add_metric([status], counts.get(status, 0))
    return family


def spending() -> Iterator[GaugeMetricFamily]:
    """Each budget's spend this period and what is left, by budget id and what it applies
    to (team, user or panel: ids, never names)."""
    labels = ["budget", "applies_to"]
    spent = GaugeMetricFamily(
        "magi_budget_spent_tokens", "Tokens spent this period, per budget.", labels=labels
    )
    left = GaugeMetricFamily(
        "magi_budget_left",
        "What a budget has left this period, in its unit.",
        labels=[*labels, "unit"],
    )
    for budget in Budget.objects.all():
        state = budgets.state_of(budget)
        kind = "team" if budget.team_id else "user" if budget.user_id else "panel"
        spent.add_metric([str(budget.pk), kind], state.spent.tokens)
        if state.left_tokens is not None:
            left.add_metric([str(budget.pk), kind, "tokens"], state.left_tokens)
        elif state.left_usd is not None:
            left.add_metric([str(budget.pk), kind, "usd"], state.left_usd)
    yield spent
    yield left
