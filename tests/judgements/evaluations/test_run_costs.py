"""What a run's judgements cost (judgements/evaluations/run_costs.py), on plain records."""

from dataclasses import dataclass, field

import pytest

from judgements.core.pricing import Price
from judgements.evaluations import run_costs

PRICES: dict[str, Price] = {
    "model-a": {"prompt": 2.0, "completion": 8.0, "cached": 0.5},
    "model-b": {"prompt": 1.0, "completion": 4.0},
}


@dataclass
class Spent:
    tokens: dict[str, dict[str, int | None]] = field(default_factory=dict)
    seconds: float | None = None
    started_at: float | None = None
    finished_at: float | None = None


def test_it_sums_each_kind_of_token_over_every_model():
    spent = [
        Spent({"model-a": {"prompt": 10, "completion": 2, "cached": 4}}),
        Spent({"model-b": {"prompt": 5, "completion": 1, "cached": None}}),
    ]
    assert run_costs.token_totals(spent) == {"prompt": 15, "completion": 3, "cached": 4}


def test_a_kind_no_provider_reported_is_null():
    spent = [Spent({"model-a": {"prompt": 10, "completion": 2, "cached": None}})]
    assert run_costs.token_totals(spent)["cached"] is None


def test_it_prices_the_tokens_and_is_null_when_a_model_has_no_price():
    spent = [
        Spent({"model-a": {"prompt": 1500, "completion": 300, "cached": 500}}),
        Spent({"model-b": {"prompt": 400, "completion": 60, "cached": None}}),
    ]
    # model-a: 1000 uncached x 2 + 500 cached x 0.5 + 300 x 8; model-b: 400 x 1 + 60 x 4.
    assert run_costs.cost(spent, PRICES) == pytest.approx(5290 / 1_000_000)
    assert run_costs.cost(spent, {"model-a": PRICES["model-a"]}) is None
    assert run_costs.cost(spent, {}) is None


def test_the_wall_time_runs_from_the_first_start_to_the_last_end():
    spent = [
        Spent(seconds=50, started_at=100, finished_at=150),
        Spent(seconds=70, started_at=110, finished_at=180),
    ]
    assert run_costs.wall_seconds(spent) == 80
    assert run_costs.seconds_per_judgement(spent) == 60
    assert run_costs.wall_seconds([]) is None and run_costs.seconds_per_judgement([]) is None
