"""How sure a model was of its decision, read from the token log-probabilities a provider
returns (`logprobs`, `top_logprobs` on chat completions), a judgement's confidence in its
verdict from its agents', and a probability in words as the pages and the admin show it.
No Django, no SDK: tokens come in as plain pairs.

An answer is a JSON object whose first decisive token is the value of `criterion_met`
(true for an approve, false for a reject; the decision itself follows from it, and the
grammar a local server decodes with ties the two). At that token the provider lists the
likeliest alternatives with their log-probabilities; the probability of approve against
reject is the mass of the alternatives that begin `true` against those that begin
`false`, renormalised over the two. Where the answer has no `criterion_met`, the
`decision` value is read the same way (approve against reject).

A probe's reply is one word, so its first token is the decision.

Unknown is None, never a guess: a provider that returns no log-probabilities, an answer
whose decisive token lists neither side, an agent with no probability.
"""

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

APPROVE, REJECT = "approve", "reject"
# Every probability and confidence is rounded to six places: finer than any threshold a
# certificate states, exp(log(0.1)) reads back as 0.1 rather than 0.09999999999999998,
# and a reject's confidence at P(approve) = 0.07 reads 0.93 as an approve's at 0.93 does
# (not 0.9299999999999999, which a threshold learned on approvals would miss).
PLACES = 6


@dataclass(frozen=True)
class Token:
    """One generated token, and the alternatives the provider listed for its place
    (the token itself is usually among them), each with its log-probability."""

    text: str
    logprob: float
    alternatives: tuple[tuple[str, float], ...] = ()


# Where the decisive value starts: after `"criterion_met":` or `"decision":` and any
# spacing (and, for a string value, its opening quote).
DECISIVE_KEYS = (
    (re.compile(r'"criterion_met"\s*:\s*'), ("true", "false")),
    (re.compile(r'"decision"\s*:\s*"?'), (APPROVE, REJECT)),
)


def answer_probability(tokens: Sequence[Token]) -> float | None:
    """P(approve) at the first decisive token of a JSON answer, or None when unknown."""
    if not tokens:
        return None
    text = "".join(token.text for token in tokens)
    for pattern, (yes, no) in DECISIVE_KEYS:
        found = pattern.search(text)
        if found is None:
            continue
        return probability_at(tokens, found.end(), yes, no)
    return None


def probe_probability(tokens: Sequence[Token]) -> float | None:
    """P(approve) at the first token of a one-word reply, or None when unknown."""
    if not tokens:
        return None
    return probability_at(tokens, 0, APPROVE, REJECT)


def probability_at(tokens: Sequence[Token], offset: int, yes: str, no: str) -> float | None:
    """The yes-side share of the mass at the token that covers character `offset` of the
    reply. An alternative counts for a side when, after what the chosen token holds before
    `offset`, it begins that side's word (or is a beginning of it: "tr", "rej")."""
    start = 0
    for token in tokens:
        end = start + len(token.text)
        if end > offset or (end == offset and not token.text):
            before = token.text[: max(offset - start, 0)]
            # Spacing and quotes before the value are not part of the decision: the token
            # that holds them and nothing decisive yet is skipped.
            if not normalise(token.text[len(before) :]):
                start = end
                offset = end
                continue
            return share(token, before, yes, no)
        start = end
    return None


def share(token: Token, before: str, yes: str, no: str) -> float | None:
    alternatives = token.alternatives or ((token.text, token.logprob),)
    mass = {yes: 0.0, no: 0.0}
    for text, logprob in alternatives:
        if not text.startswith(before):
            continue
        word = normalise(text[len(before) :])
        if not word:
            continue
        for side in (yes, no):
            if side.startswith(word) or word.startswith(side):
                mass[side] += math.exp(logprob)
                break
    total = mass[yes] + mass[no]
    return round(mass[yes] / total, PLACES) if total > 0 else None


def normalise(text: str) -> str:
    return text.strip().strip("\"'`").strip().lower()


def in_verdict(p_approve: float | None, verdict: str | None) -> float | None:
    """How sure an agent was of `verdict` (approve or reject), rounded as every
    probability is."""
    if p_approve is None or verdict is None:
        return None
    return round(p_approve if verdict == APPROVE else 1.0 - p_approve, PLACES)


def panel_confidence(p_approves: Sequence[float | None], verdict: str) -> float | None:
    """A verdict's confidence: the least sure of the three agents that it is right (each
    agent's probability of the panel's verdict, the dissenter's included). None when any
    agent's is unknown: a verdict is as sure as its least-known part."""
    values = [in_verdict(p, verdict) for p in p_approves]
    if not values or any(value is None for value in values):
        return None
    return min(value for value in values if value is not None)


def probability_words(value: float | None) -> str:
    """A probability as the pages and the admin write it: "87 %" (whole percents), or
    "unknown"."""
    return "unknown" if value is None else f"{value * 100:.0f} %"
