"""What can be checked in an agent's answer without asking a model: pure, no Django.

Two failures of small models are visible in the record and checkable word by word:

- **A claimed absence of a stated fact.** An answer lists in `missing` what it says the
  content lacks ("receipt", "rollback plan"); when the words of such an item stand
  together in the content (case, plurals and simple word forms aside) and nothing next
  to them denies them ("no rollback plan", "rollback: none"), the content states what
  the answer calls missing.
- **A peer's reason adopted.** In rounds 2 and 3 an agent gives, word for word (case,
  spacing and end punctuation aside), a reason another agent gave in an earlier round:
  a reason about that agent's criterion, not its own. Keeping its own earlier words is
  not copying, even when a peer copied them first.

The engine asks such an answer once more with the finding pointed out
(judgements/engine/deliberation.py); what persists is a signal of the contested mark
(judgements/core/contested.py).
"""

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from judgements.core import rules

# Words that carry no fact in a `missing` item ("no itemised receipt", "a mention of the
# rollback plan"): an item of these alone is never checked.
FILLER_WORDS = frozenset(
    """
    a an the any no not none nor of or and for to in on at by with without is are was
    were be been being it its this that these those there their his her mention mentioned
    mentions stated state states statement missing lack lacks lacking absent given
    provided clear clearly explicit explicitly specific specified information info detail
    details proof evidence
    """.split()  # noqa: SIM905 - a word list reads better as words
)
# Longest first, so "ies" is tried before "es" and "s".
_SUFFIXES = ("ings", "ing", "ied", "ies", "ed", "es", "s")
APOSTROPHE = "\u2019"  # a typographic apostrophe, as in "itemised receipt\u2019s"
_WORD = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*")
_SPACE = re.compile(r"\s+")
MIN_STEM = 3


def stem(word: str) -> str:
    """A word reduced to a rough stem, so "receipts", "reviewed" and "testing" meet
    "receipt", "review" and "test": case folded, one common suffix off, a doubled final
    consonant undone ("planned" -> "plan"). Deliberately simple: it must never let two
    unrelated words meet, and a word it misses only means a claim goes unchecked."""
    word = word.casefold().replace(APOSTROPHE, "'").removesuffix("'s")
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_STEM:
            base = word[: -len(suffix)]
            if suffix in ("ied", "ies"):
                base += "y"
            elif (
                suffix in ("ing", "ings", "ed")
                and len(base) > MIN_STEM
                and base[-1] == base[-2]
                and base[-1] not in "aeiouls"
            ):
                base = base[:-1]
            if suffix == "es" and not base.endswith(("s", "x", "z", "ch", "sh")):
                base = word[:-1]  # "rates" -> "rate", not "rat"
            return base
    return word


def words(text: str) -> list[str]:
    return [match.group(0) for match in _WORD.finditer(text)]


def fact_words(item: str) -> list[str]:
    """The words of a `missing` item that name a fact, as stems (each once)."""
    return list(dict.fromkeys(stem(w) for w in words(item) if w.casefold() not in FILLER_WORDS))


# A fact the content names only to deny it ("No rollback plan yet", "Rollback: none",
# "tests were not run") is not stated: these words just before or after it negate it.
NEGATIONS = frozenset(
    {
        *("no", "not", "none", "without", "never", "nobody", "nothing", "nor"),
        *("missing", "lacks", "lacking", "absent", "skipped"),
    }
)
NEGATION_BEFORE = 3  # words
NEGATION_AFTER = 3
# The fact words must stand close together, as one phrase with a few words between:
# "rollback" in one sentence and "plan" in another state no rollback plan.
PHRASE_SLACK = 3


def is_negation(word: str) -> bool:
    word = word.casefold().replace(APOSTROPHE, "'")
    return word in NEGATIONS or word.endswith("n't")


def stated(facts: Sequence[str], content_words: Sequence[str]) -> bool:
    """Whether the content states the fact: its words within one short stretch, not
    negated just before or after."""
    content_stems = [stem(word) for word in content_words]
    width = len(facts) + PHRASE_SLACK
    for start, first in enumerate(content_stems):
        if first not in facts:
            continue
        window = content_stems[start : start + width]
        if not all(fact in window for fact in facts):
            continue
        end = start + max(window.index(fact) for fact in facts)
        around = [
            *content_words[max(start - NEGATION_BEFORE, 0) : start],
            *content_words[start : end + 1],
            *content_words[end + 1 : end + 1 + NEGATION_AFTER],
        ]
        if not any(is_negation(word) for word in around):
            return True
    return False


def stated_absences(missing: Sequence[str], content: str) -> list[str]:
    """The items of `missing` that the content states (see `stated`). Items with no fact
    word are not checked."""
    content_words = words(content)
    found = []
    for item in missing:
        facts = fact_words(item)
        if facts and stated(facts, content_words):
            found.append(item)
    return found


def refuted_absences(decision: str, missing: Sequence[str], content: str) -> list[str]:
    """stated_absences of a reject's `missing` list; an approve's decides nothing."""
    return stated_absences(missing, content) if decision == rules.Vote.REJECT else []


def normalise_reason(reason: str) -> str:
    return _SPACE.sub(" ", reason).strip().strip(".!").casefold()


@dataclass(frozen=True)
class EarlierReason:
    agent_name: str
    round: int
    reason: str


def copied_from(
    agent_name: str, round_number: int, reason: str, earlier: Iterable[EarlierReason]
) -> EarlierReason | None:
    """The peer's earlier reason that `reason` repeats word for word, or None. Round 1
    copies nothing (there is nothing earlier); an agent repeating its own earlier words
    is not copying."""
    if round_number < 2:
        return None
    said = normalise_reason(reason)
    before = [e for e in earlier if e.round < round_number]
    if any(e.agent_name == agent_name and normalise_reason(e.reason) == said for e in before):
        return None
    for other in sorted(before, key=lambda e: (e.round, e.agent_name)):
        if other.agent_name != agent_name and normalise_reason(other.reason) == said:
            return other
    return None


# --- the QUOTE variant's checks (judgements/core/prompt_variants.py) ------------------------

_QUOTE_MARKS = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
# A quote may skip words with an ellipsis; each piece must stand in the content.
_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|\u2026)\s*")


def _plain(text: str) -> str:
    """Case, spacing and typographic quote marks aside: what a quote is compared as."""
    return _SPACE.sub(" ", text.translate(_QUOTE_MARKS)).strip().casefold()


def quote_found(quote: str, content: str) -> bool:
    """Whether the quote stands in the content (case, spacing, typographic quotes and
    surrounding quote marks or end punctuation aside; pieces an ellipsis joins each in
    turn). An empty quote claims nothing, so it is found."""
    plain_content = _plain(content)
    at = 0
    for piece in _ELLIPSIS.split(_plain(quote).strip("\"' ")):
        piece = piece.strip(" .,;:")
        if not piece:
            continue
        at = plain_content.find(piece, at)
        if at == -1:
            return False
        at += len(piece)
    return True


# A claimed absence in a reason: "does not mention the rollout time", "no reviewer is
# named", "lacks a head count". The phrase after the verb is the claim.
_ABSENCE_IN_REASON = re.compile(
    r"(?:does not|doesn't|did not|didn't|fails to|never)\s+"
    r"(?:mention|state|include|specify|name|provide|say|give|list|identify)s?\s+([^.;,]+)"
    r"|(?:no mention of|there is no|there are no|lacks?|missing|without)\s+([^.;,]+)",
    re.IGNORECASE,
)


def claimed_absences(reason: str, missing: Sequence[str]) -> list[str]:
    """What an answer says the content lacks: its `missing` items, then the phrases of its
    reason that claim an absence."""
    found = [item for item in missing if item.strip()]
    for match in _ABSENCE_IN_REASON.finditer(reason):
        phrase = (match.group(1) or match.group(2) or "").strip()
        if phrase:
            found.append(phrase)
    return list(dict.fromkeys(found))


# A paraphrase a word-for-word check misses ("the rollout date or time" for "Wednesday at
# 11:00"): the claim names a kind of fact, and the content holds a fact of that kind.
# Each kind: the stems of words that name it in a claim, and what states it in content.
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_NAME = r"[A-Z][a-z]+(?:[ -][A-Z][a-z']+)+"
_NUMBER_WORDS = "two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|dozen|twenty"
FACT_KINDS: dict[str, tuple[frozenset[str], re.Pattern[str]]] = {
    # Most specific first: "ticket number" names a ticket, not a count.
    "ticket": (
        frozenset({"ticket", "incident", "jira", "reference", "request", "issue"}),
        re.compile(r"\b[A-Z]{2,}-\d+\b|#\d+\b|\b(?i:ticket|incident|request)\s+\d+\b"),
    ),
    # A person: a name (two capitalised words, the second word's case kept) within a few
    # words after a word of reviewing or approving.
    "person": (
        frozenset({"reviewer", "review", "approver", "approval", "sign", "signoff", "who"}),
        re.compile(rf"\b(?i:review|approv|sign|check)\w*(?:\W+\w+){{0,4}}?\W+(?:by\s+)?({_NAME})"),
    ),
    "time": (
        # `stem` takes "-ed" off "scheduled" ("schedul") but leaves "schedule" whole, so
        # the inflected forms are named too.
        frozenset(
            {"date", "dated", "time", "timed", "day", "when", "schedule", "scheduled"}
            | {"timing", "hour", "window"}
        ),
        re.compile(
            rf"\b(?:{_WEEKDAYS})\b(?:,?\s+(?:at\s+)?\d{{1,2}}[:.]\d{{2}})?"
            rf"|\b\d{{1,2}}[:.]\d{{2}}\b|\b\d{{1,2}}\s?(?:am|pm)\b"
            rf"|\b\d{{4}}-\d{{2}}-\d{{2}}\b"
            rf"|\b\d{{1,2}} (?:{_MONTHS})\b|\b(?:{_MONTHS}) \d{{1,2}}\b",
            re.IGNORECASE,
        ),
    ),
    "count": (
        frozenset({"count", "number", "many", "headcount", "attendee", "participant", "size"}),
        re.compile(
            # A number, not part of a time, a date or a code ("11:00", "OPS-1182").
            rf"(?<![\d:.\-])\b\d+\b(?![:.\-]\d)|\b(?:{_NUMBER_WORDS})\b",
            re.IGNORECASE,
        ),
    ),
}


def fact_kinds(claim: str) -> list[str]:
    """The kinds of fact a claim names, by its words' stems."""
    stems = {stem(word) for word in words(claim)}
    return [kind for kind, (names, _) in FACT_KINDS.items() if stems & {stem(n) for n in names}]


def evidence_of(kind: str, content: str) -> str | None:
    """The first stretch of the content stating a fact of `kind`, not negated just before
    ("no reviewer yet, Ben Okafor wrote it" names a person but states no review)."""
    for match in FACT_KINDS[kind][1].finditer(content):
        before = words(content[: match.start()])[-NEGATION_BEFORE:]
        inside = words(match.group(0))
        if any(is_negation(word) for word in (*before, *inside)):
            continue
        return match.group(0).strip()
    return None


def contradicted_absences(
    decision: str, reason: str, missing: Sequence[str], content: str
) -> list[tuple[str, str]]:
    """(claim, evidence) for each absence a reject claims that the content contradicts:
    word for word (`stated`), or a fact of the kind the claim names (FACT_KINDS). A hint
    the engine asks again on, not a proof: the evidence may be another fact of that kind."""
    if decision != rules.Vote.REJECT:
        return []
    content_words = words(content)
    found = []
    for claim in claimed_absences(reason, missing):
        facts = fact_words(claim)
        if facts and stated(facts, content_words):
            found.append((claim, claim))
            continue
        for kind in fact_kinds(claim):
            evidence = evidence_of(kind, content)
            if evidence is not None:
                found.append((claim, evidence))
                break
    return found


@dataclass(frozen=True)
class Findings:
    """What a check found in one answer: the `missing` items the content states, and the
    peer's reason it copied."""

    stated: tuple[str, ...] = ()
    copied: EarlierReason | None = None
    # The QUOTE variant's: a quote not in the content, and claimed absences the content
    # contradicts, as (claim, evidence).
    unquoted: str | None = None
    contradicted: tuple[tuple[str, str], ...] = ()
    # The CHANGE_CHECK variant's: the agent's vote of the round before, which this turned.
    changed_from: str | None = None

    def __bool__(self) -> bool:
        found = (self.stated, self.copied, self.contradicted, self.changed_from)
        return any(found) or self.unquoted is not None


def check_answer(
    agent_name: str,
    round_number: int,
    decision: str,
    reason: str,
    missing: Sequence[str],
    content: str,
    earlier: Iterable[EarlierReason],
    quote: str | None = None,
    own_last_vote: str | None = None,
) -> Findings:
    """Every check of one answer; `quote` (the QUOTE variant's, None when not asked) adds
    the quote's and the paraphrased absences' checks, `own_last_vote` (CHANGE_CHECK's:
    the agent's vote of the round before; None when not asked) whether it turned."""
    stated_items = tuple(refuted_absences(decision, missing, content))
    contradicted: tuple[tuple[str, str], ...] = ()
    unquoted = None
    if quote is not None:
        unquoted = None if quote_found(quote, content) else quote
        contradicted = tuple(
            (claim, evidence)
            for claim, evidence in contradicted_absences(decision, reason, missing, content)
            if claim not in stated_items
        )
    return Findings(
        stated=stated_items,
        copied=copied_from(agent_name, round_number, reason, earlier),
        unquoted=unquoted,
        contradicted=contradicted,
        changed_from=own_last_vote if own_last_vote not in (None, decision) else None,
    )
