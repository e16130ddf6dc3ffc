"""Each reader of the panel's record on its own: what it finds and the words it says it
in. Every combination of them is run through contested.assess in test_contested.py."""

from judgements.core.record_signals import (
    AgentRecord,
    Answer,
    Signal,
    conformed,
    copied,
    late_changes,
    off_criterion_changes,
    rechecked,
    retried,
    split,
    stated_absences,
)

NAMES = ("Melchior", "Balthasar", "Casper")
VOTE = {"A": "approve", "R": "reject"}
CONTENT = "Expense claim: taxi 38 EUR, receipt attached, approved by Dana Weiss."


def agents(*sequences: str, reasons: dict[tuple[int, int], str] | None = None) -> list[AgentRecord]:
    """Three agents voting `sequences`; `reasons` sets (agent, round)'s reason."""
    reasons = reasons or {}
    return [
        AgentRecord(
            name,
            tuple(
                Answer(r, VOTE[v], reasons.get((index, r), f"{name}'s own reason in round {r}."))
                for r, v in enumerate(sequence, start=1)
            ),
        )
        for index, (name, sequence) in enumerate(zip(NAMES, sequences, strict=True))
    ]


def test_a_split_names_the_lone_agent_and_a_unanimous_panel_has_none():
    (found,) = split(agents("AAA", "AAA", "RRR"))
    assert found.signal == Signal.SPLIT
    assert found.agent == "Casper"
    assert found.words == "The panel split 2-1: Casper decided reject against the others' approve."
    assert split(agents("AAA", "AAA", "AAA")) == []


def test_a_late_change_says_the_round_from_which_the_final_vote_held():
    (found,) = late_changes(agents("RAA", "AAA", "AAA"))
    assert (found.agent, found.round) == ("Melchior", 2)
    assert found.words == "Melchior's approve came from a round-2 change (round 1: reject)."
    # Approve, approve, reject stays approve by the weights (0.1 + 0.4): no late change.
    assert late_changes(agents("AAR", "AAA", "AAA")) == []


def test_conforming_is_a_change_to_the_vote_both_others_gave_the_round_before():
    (found,) = conformed(agents("RAA", "AAA", "AAA"))
    assert (found.agent, found.round) == ("Melchior", 2)
    assert conformed(agents("RAA", "RRR", "AAA")) == []


def test_a_later_reason_copied_word_for_word_from_a_peer_is_named():
    copy = agents("AAA", "AAA", "AAA", reasons={(0, 2): "Balthasar's own reason in round 1."})
    (found,) = copied(copy)
    assert (found.agent, found.round) == ("Melchior", 2)
    assert "Balthasar's round-1 reason" in found.words


def test_a_reject_calling_missing_what_the_content_states_is_named():
    record = [
        AgentRecord("Melchior", (Answer(1, "reject", "No receipt.", missing=("receipt",)),)),
        AgentRecord("Balthasar", (Answer(1, "approve", "Fine.", missing=("receipt",)),)),
    ]
    (found,) = stated_absences(CONTENT, record)
    assert (
        found.words
        == 'Melchior rejected in round 1 for lack of "receipt", which the content states.'
    )


def test_rechecks_and_retries_name_the_answer():
    record = [AgentRecord("Casper", (Answer(1, "approve", "Fine.", attempts=3, rechecked=True),))]
    assert [f.words for f in rechecked(record)] == [
        "Casper's round-1 answer failed a check and was asked again."
    ]
    assert [f.words for f in retried(record)] == ["Casper's round-1 answer needed 3 attempts."]


def test_an_off_criterion_turn_needs_every_agents_criterion():
    criteria = ("Receipts attached.", "Approved by a manager.", "Taxi under 50 EUR.")
    off = "The manager approved it, so it is fine."
    record = [
        AgentRecord(
            name,
            tuple(
                Answer(r, VOTE[v], off if r == 3 else f"{name} {r}.")
                for r, v in enumerate("AAR" if index == 0 else "AAA", start=1)
            ),
            criteria[index],
        )
        for index, name in enumerate(NAMES)
    ]
    (found,) = off_criterion_changes(record)
    assert (found.agent, found.round) == ("Melchior", 3)
    unknown = [AgentRecord(a.name, a.answers) for a in record]
    assert off_criterion_changes(unknown) == []
