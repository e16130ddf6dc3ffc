"""Whether a reason speaks of its agent's own criterion, and whether a turned vote rests
on one: pure, no Django.

The record showed agents turning their vote in the later rounds on a peer's reason,
written for the peer's criterion, or on the very reason they had given for the other
vote. A reason is about a criterion when it uses the words only that criterion uses
(`about_own_criterion`); a turn after two rounds of the same vote on any other reason is
a signal of the contested mark (`turned_off_criterion`, judgements/core/
record_signals.py), and with the TURN_NEEDS_REASON variant a turn in round 2 or 3 on a
reason the agent already gave, or on one about a peer's criterion
(`about_a_peers_criterion`), leaves the vote as it was (`unfounded_turn`,
judgements/engine/deliberation.py). With TURN_TO_REJECT_NAMES_CONTENT, so does a turn from
approve to reject on a reason that names nothing the content says (`names_the_content`,
`bare_turn_to_reject`).
"""

from collections.abc import Sequence

from judgements.core.answer_checks import fact_words, normalise_reason, stem, words
from judgements.core.rules import Vote

# Words a criterion uses to say how to judge, not what it is about: never what tells two
# criteria apart ("someone other than its author" is not about "the other agents").
GENERIC_WORDS = frozenset(
    stem(word)
    for word in """
    approve approves reject rejects when content comment request asks ask asked what who
    whom other another than someone anyone nobody nothing every each most least per within
    above below does do has have get gets got just use uses used item items list change
    """.split()  # noqa: SIM905 - a word list reads better as words
)


def distinctive_words(criteria: Sequence[str]) -> list[frozenset[str]]:
    """Each criterion's fact words (as stems) that no other criterion of the panel uses:
    what tells its subject apart ("rollback", "review" for one deploy agent, "Saturday",
    "incident" for another)."""
    stems = [frozenset(fact_words(text)) - GENERIC_WORDS for text in criteria]
    return [
        own - frozenset().union(*(other for j, other in enumerate(stems) if j != i))
        for i, own in enumerate(stems)
    ]


def words_used(reason: str, criteria: Sequence[str]) -> tuple[list[frozenset[str]], list[int]]:
    """Each criterion's own words (`distinctive_words`), and how many of them the reason
    uses, in panel order: what both readings of a reason's subject below count."""
    distinct = distinctive_words(criteria)
    said = frozenset(stem(word) for word in words(reason))
    return distinct, [len(said & own) for own in distinct]


def about_own_criterion(reason: str, index: int, criteria: Sequence[str]) -> bool:
    """Whether a reason speaks of the criterion of agent `index` of the panel (criteria in
    panel order): it shares a word with that criterion alone, and no fewer than with any
    other agent's criterion alone. Deliberately simple and one-sided: when the criteria
    have nothing of their own to tell them apart, every reason counts as about its own."""
    distinct, used = words_used(reason, criteria)
    if not distinct[index]:
        return True
    own = used[index]
    return own > 0 and all(own >= count for j, count in enumerate(used) if j != index)


def about_a_peers_criterion(reason: str, index: int, criteria: Sequence[str]) -> bool:
    """Whether a reason speaks of another agent's criterion more than of agent `index`'s
    own: it shares more words with some peer's criterion alone than with its own. A reason
    that uses no criterion's own words is about none (a short criterion, "Approve only
    legal actions.", gives few words to use)."""
    _, used = words_used(reason, criteria)
    return any(count > used[index] for j, count in enumerate(used) if j != index)


def turned_off_criterion(
    votes: Sequence[str], reasons: Sequence[str], index: int, criteria: Sequence[str]
) -> list[int]:
    """The rounds (1-based) in which agent `index` turned its vote after at least two
    rounds of the same vote, with a reason not about its own criterion."""
    turned = []
    for at in range(2, len(votes)):
        held = votes[0]
        if any(vote != held for vote in votes[:at]) or votes[at] == held:
            continue
        if not about_own_criterion(reasons[at], index, criteria):
            turned.append(at + 1)
    return turned


def unfounded_turn(
    decision: str,
    reason: str,
    own_earlier: Sequence[tuple[str, str]],
    index: int,
    criteria: Sequence[str],
) -> bool:
    """Whether an answer turns agent `index`'s vote of the round before (`own_earlier`:
    its (vote, reason) in each earlier round, in order) on nothing of its own: with a
    reason it already gave, or one about a peer's criterion (TURN_NEEDS_REASON). A reason
    given before supported the other vote; a peer's criterion says nothing about this
    agent's. A reason about no criterion's own words is not held against the turn: with
    short criteria most reasons are, and a turn after two rounds of the same vote on one
    is a contest signal already (`turned_off_criterion`)."""
    if not own_earlier or own_earlier[-1][0] == decision:
        return False
    said = normalise_reason(reason)
    if any(normalise_reason(before) == said for _, before in own_earlier):
        return True
    return about_a_peers_criterion(reason, index, criteria)


# Words a reason and a content share without naming anything the content says: how
# English is put together, not what a request or a comment is about. (The articles and
# pronouns `fact_words` drops, and GENERIC_WORDS, are not repeated here.)
COMMON_WORDS = frozenset(
    stem(word)
    for word in """
    all also as but can could did if into may must only our out should so some such
    them then they we which will would you your i me my he she him from about
    """.split()  # noqa: SIM905 - a word list reads better as words
)


def names_the_content(reason: str, content: str, criterion: str) -> bool:
    """Whether a reason names something the content says: a word of the content (as a
    stem) that the agent's criterion does not use, nor any criterion to say how to judge.
    "The content does not specify who gets the access" names nothing the criterion did not
    already say; "the tests failed on commit 4f2a" names the content's own words."""
    shared = frozenset(fact_words(reason)) & frozenset(fact_words(content))
    return bool(shared - frozenset(fact_words(criterion)) - GENERIC_WORDS - COMMON_WORDS)


def bare_turn_to_reject(
    decision: str, reason: str, own_earlier: Sequence[tuple[str, str]], content: str, criterion: str
) -> bool:
    """Whether an answer turns the agent's approve of the round before to reject on a reason
    that names nothing the content says (TURN_TO_REJECT_NAMES_CONTENT). Having read the content
    and found the criterion met, an agent that now calls its facts absent without naming
    what it read instead has most often taken up a peer's doubt: on the choosing runs'
    later rounds such turns went to the wrong vote 23 times in 25 (docs/panel-quality.md).
    A turn to approve is left to `unfounded_turn`: on the same runs most were right."""
    if not own_earlier or own_earlier[-1][0] != Vote.APPROVE or decision != Vote.REJECT:
        return False
    return not names_the_content(reason, content, criterion)
