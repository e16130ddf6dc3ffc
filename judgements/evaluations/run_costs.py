"""What an evaluation run's judgements cost: tokens over every attempt, seconds, wall time
and USD, from plain records (no Django). Every finished judgement counts, errors
included: they were spent all the same."""

from collections.abc import Iterable, Mapping
from typing import Protocol

from judgements.core import pricing
from judgements.core.pricing import Price

TOKEN_KINDS = ("prompt", "completion", "cached")


class Spent(Protocol):
    """What the costs read of a judgement (metrics.Record has it)."""

    @property
    def tokens(self) -> Mapping[str, Mapping[str, int | None]]: ...
    @property
    def seconds(self) -> float | None: ...
    @property
    def started_at(self) -> float | None: ...
    @property
    def finished_at(self) -> float | None: ...


def token_totals(finished: Iterable[Spent]) -> dict[str, int | None]:
    """Tokens over every attempt; a kind no provider reported at all is None."""
    totals: dict[str, int | None] = dict.fromkeys(TOKEN_KINDS)
    for record in finished:
        for counts in record.tokens.values():
            for kind in TOKEN_KINDS:
                count = counts.get(kind)
                if count is not None:
                    totals[kind] = (totals[kind] or 0) + count
    return totals


def seconds_per_judgement(finished: Iterable[Spent]) -> float | None:
    seconds = [r.seconds for r in finished if r.seconds is not None]
    return sum(seconds) / len(seconds) if seconds else None


def wall_seconds(finished: Iterable[Spent]) -> float | None:
    """From the first judgement's start to the last one's end: what the run took, its
    judgements running side by side (their mean time each is seconds_per_judgement)."""
    starts = [r.started_at for r in finished if r.started_at is not None]
    ends = [r.finished_at for r in finished if r.finished_at is not None]
    return max(ends) - min(starts) if starts and ends else None


def cost(finished: Iterable[Spent], prices: Mapping[str, Price]) -> float | None:
    """USD spent over the records (core/pricing.py); None without a price for every
    model used."""
    total = 0.0
    for record in finished:
        spent = pricing.usd(record.tokens, prices)
        if spent is None:
            return None
        total += spent
    return total if prices else None
