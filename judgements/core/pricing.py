"""What tokens cost, from prices in USD per million tokens (MAGI_MODEL_PRICES)."""

from collections.abc import Mapping
from typing import NotRequired, TypedDict

PER_MILLION = 1_000_000


class Price(TypedDict):
    """A model's price in USD per million tokens (MAGI_MODEL_PRICES: ModelPrice in
    magi_site/environment.py)."""

    prompt: float
    completion: float
    cached: NotRequired[float | None]


def usd(
    tokens: Mapping[str, Mapping[str, int | None]], prices: Mapping[str, Price]
) -> float | None:
    """USD for each model's {"prompt", "completion", "cached"} token counts; None without
    prices, or when a model used has no price (a partial sum would read as the whole).

    Cached tokens are part of the prompt tokens (as providers report them) and cost the
    model's "cached" price when it has one, else its prompt price.
    """
    if not prices:
        return None
    total = 0.0
    for model, counts in tokens.items():
        price = prices.get(model)
        if price is None:
            return None
        prompt = counts.get("prompt") or 0
        cached = min(counts.get("cached") or 0, prompt)
        cached_price = price.get("cached")
        if cached_price is None:
            cached_price = price["prompt"]
        total += (
            (prompt - cached) * price["prompt"]
            + cached * cached_price
            + (counts.get("completion") or 0) * price["completion"]
        ) / PER_MILLION
    return total
