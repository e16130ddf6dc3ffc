import pytest

from judgements.models import Judgement, RoundDecision, Status
from judgements.web import live_page
from tests.support.states import bring

pytestmark = pytest.mark.django_db


def vote(agent, round_number: int, decision: str) -> None:
    RoundDecision.objects.create(agent=agent, round=round_number, decision=decision, reason="r")


def states(judgement) -> list[tuple[str, bool, str]]:
    view = live_page.load(judgement.pk)
    return [(box.state, box.thinking, box.label) for box in view.boxes]


def test_a_queued_judgement_waits(make_judgement):
    assert states(make_judgement()) == [("waiting", False, "WAITING")] * 3


def test_every_call_of_round_one_is_in_flight(make_judgement):
    judgement = make_judgement()
    bring(Judgement.objects.filter(pk=judgement.pk), Status.JUDGING)
    judgement.refresh_from_db()
    assert states(judgement) == [("thinking", True, "THINKING")] * 3


def test_colours_follow_the_rules_while_the_next_round_is_in_flight(make_judgement):
    judgement = make_judgement()
    bring(Judgement.objects.filter(pk=judgement.pk), Status.JUDGING)
    judgement.refresh_from_db()
    melchior, balthasar, casper = judgement.agents.all()
    for agent, votes in ((melchior, "AA"), (balthasar, "RA"), (casper, "A")):
        for number, letter in enumerate(votes, start=1):
            vote(agent, number, "approve" if letter == "A" else "reject")
    # Round 2 is under way: Casper still thinks; the others wait for round 3.
    assert states(judgement) == [
        ("approve", False, "APPROVE"),
        ("pending", False, "OPEN"),
        ("pending", True, "THINKING"),
    ]
    vote(casper, 2, "reject")
    # Round 3 is under way: a fixed approve stays green while its call is in flight.
    assert states(judgement) == [
        ("approve", True, "THINKING"),
        ("pending", True, "THINKING"),
        ("pending", True, "THINKING"),
    ]
    assert live_page.load(judgement.pk).current_round == 3


def test_after_round_three_every_box_is_fixed(make_judgement):
    judgement = make_judgement()
    bring(Judgement.objects.filter(pk=judgement.pk), Status.REJECTED)
    judgement.refresh_from_db()
    for agent, votes in zip(judgement.agents.all(), ("RRA", "RAR", "ARR"), strict=True):
        for number, letter in enumerate(votes, start=1):
            vote(agent, number, "approve" if letter == "A" else "reject")
    assert [s[0] for s in states(judgement)] == ["approve", "reject", "reject"]
    assert [box.score for box in live_page.load(judgement.pk).boxes] == [0.5, 0.4, 0.1]


def test_the_failed_agent_shows_the_error_and_nobody_thinks(make_judgement):
    judgement = make_judgement()
    melchior, balthasar, _ = judgement.agents.all()
    vote(melchior, 1, "approve")
    bring(
        Judgement.objects.filter(pk=judgement.pk), Status.ERROR, error_agent=balthasar,
        error_round=1,
    )  # fmt: skip
    judgement.refresh_from_db()
    assert states(judgement) == [
        ("pending", False, "OPEN"),
        ("error", False, "ERROR"),
        ("pending", False, "OPEN"),
    ]


def cast(judgement, *votes_per_agent: str) -> None:
    for agent, votes in zip(judgement.agents.all(), votes_per_agent, strict=True):
        for number, letter in enumerate(votes, start=1):
            vote(agent, number, "approve" if letter == "A" else "reject")


def change_words(judgement) -> list[list[str]]:
    return [[line.change_words for line in box.lines] for box in live_page.load(judgement.pk).boxes]


@pytest.mark.parametrize(
    ("votes", "words"),
    [
        (
            ("RAA", "AAA", "ARR"),
            [
                ["", "changed, with the majority", "kept, others split"],
                ["", "kept, others split", "kept, others split"],
                ["", "changed, others split", "kept, against the majority"],
            ],
        ),
        (
            ("AAA", "AAA", "ARA"),
            [
                ["", "kept, with the majority", "kept, others split"],
                ["", "kept, with the majority", "kept, others split"],
                ["", "changed, against the majority", "changed, with the majority"],
            ],
        ),
    ],
)
def test_each_later_round_says_how_the_vote_moved(make_judgement, votes, words):
    judgement = make_judgement()
    bring(Judgement.objects.filter(pk=judgement.pk), Status.APPROVED)
    judgement.refresh_from_db()
    cast(judgement, *votes)
    assert change_words(judgement) == words


def test_vote_changes_show_while_a_round_is_under_way(make_judgement):
    judgement = make_judgement()
    bring(Judgement.objects.filter(pk=judgement.pk), Status.JUDGING)
    judgement.refresh_from_db()
    cast(judgement, "RA", "A", "AR")
    # Balthasar's round-2 call is in flight: its line for round 1 compares with nothing.
    assert change_words(judgement) == [
        ["", "changed, with the majority"],
        [""],
        ["", "changed, others split"],
    ]
    line = live_page.load(judgement.pk).boxes[0].lines[1]
    assert (line.decision.round, line.decision.decision) == (2, "approve")


def test_an_agents_own_confidence_in_a_reject_is_rounded_as_in_an_approve():
    # 1 - 0.07 is 0.9299999999999999 in floating point.
    assert live_page.own_probability("reject", 0.07) == 0.93
    assert live_page.own_probability("approve", 0.93) == 0.93
    assert live_page.own_probability(None, 0.5) is None
