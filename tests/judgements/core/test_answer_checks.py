import pytest

from judgements.core import answer_checks
from judgements.core.answer_checks import (
    EarlierReason,
    Findings,
    check_answer,
    copied_from,
    refuted_absences,
    stated_absences,
    stem,
)

CONTENT = (
    "Expense claim: taxi to the Bosch office, 38 EUR. Receipts are attached. Reviewed by "
    "Priya; rollback planned for Monday. Tickets OPS-312 and OPS-313."
)


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("receipts", "receipt"),
        ("Receipt", "receipt"),
        ("reviewed", "review"),
        ("reviewing", "review"),
        ("planned", "plan"),
        ("policies", "policy"),
        ("rates", "rate"),
        ("classes", "class"),
        ("tests", "test"),
        ("bus", "bus"),  # too short to lose its "s"
        ("Priya's", "priya"),
        ("Priya\u2019s", "priya"),
    ],
)
def test_it_stems_plurals_and_simple_word_forms(word, expected):
    assert stem(word) == expected


@pytest.mark.parametrize(
    "item",
    ["receipt", "receipts", "no receipt", "a review", "rollback plan", "ticket"],
)
def test_it_finds_what_the_content_states(item):
    assert stated_absences([item], CONTENT) == [item]


@pytest.mark.parametrize(
    "item",
    [
        "itemised receipt",  # "itemised" is not in the content
        "business purpose",
        "review by another person",
        "no mention",  # no fact word: not checked
        "",
    ],
)
def test_it_leaves_alone_what_the_content_does_not_state(item):
    assert stated_absences([item], CONTENT) == []


def test_it_keeps_the_items_in_their_order():
    assert stated_absences(["ticket", "hotel", "receipt"], CONTENT) == ["ticket", "receipt"]


EARLIER = [
    EarlierReason("Melchior", 1, "The receipt is missing."),
    EarlierReason("Casper", 1, "No alcohol is listed."),
    EarlierReason("Balthasar", 1, "Within the limits."),
]


def test_a_later_reason_repeating_a_peer_is_a_copy():
    found = copied_from("Balthasar", 2, "  the RECEIPT is missing ", EARLIER)
    assert found == EARLIER[0]


def test_round_one_copies_nothing():
    assert copied_from("Balthasar", 1, "The receipt is missing.", EARLIER) is None


def test_an_agent_keeping_its_own_words_is_not_copying():
    earlier = [*EARLIER, EarlierReason("Balthasar", 1, "No alcohol is listed.")]
    assert copied_from("Balthasar", 2, "No alcohol is listed", earlier) is None


def test_a_peer_reason_from_the_same_round_is_not_earlier():
    earlier = [EarlierReason("Melchior", 2, "Same words.")]
    assert copied_from("Casper", 2, "Same words.", earlier) is None


def test_check_answer_reports_both_findings():
    findings = check_answer(
        "Balthasar", 2, "reject", "The receipt is missing.", ["receipt"], CONTENT, EARLIER
    )
    assert findings
    assert findings.stated == ("receipt",)
    assert findings.copied == EARLIER[0]
    assert not check_answer("Balthasar", 2, "reject", "Fine.", ["hotel"], CONTENT, EARLIER)


def test_only_a_reject_is_held_to_its_missing_list():
    assert refuted_absences("reject", ["receipt"], CONTENT) == ["receipt"]
    assert refuted_absences("approve", ["receipt"], CONTENT) == []


@pytest.mark.parametrize(
    ("item", "content"),
    [
        ("rollback plan", "Reviewed by Sam. No rollback plan yet."),
        ("rollback plan", "Planned release on Saturday. Rollback: none needed."),
        ("tests", "Tests were not run because the pipeline is slow."),
        ("reviewer", "No reviewer was available."),
        ("receipt", "Dinner for 4, 240 EUR, receipt missing."),
        ("receipt", "Taxi, 38 EUR. I don't have a receipt."),
    ],
)
def test_a_fact_the_content_denies_is_not_stated(item, content):
    assert stated_absences([item], content) == []


def test_the_words_of_a_fact_must_stand_together():
    # "plan" from "planned release" and "rollback" much later are no rollback plan.
    content = "A planned release on Saturday at ten, with the team of Jo. Rollback: redeploy."
    assert stated_absences(["rollback plan"], content) == []
    assert stated_absences(["rollback plan"], "Rollback plan: redeploy v2.") == ["rollback plan"]


# --- the QUOTE variant's checks ----------------------------------------------------------

DEPLOY = (
    "Deploy payments-api on Wednesday at 11:00. Reviewed by Sara Lindqvist, who did not "
    "write it. Ticket OPS-1182 raised by the manager. 14 people attend the call."
)


def test_a_quote_is_found_case_spacing_and_typographic_marks_aside():
    assert answer_checks.quote_found("reviewed  by SARA Lindqvist", DEPLOY)
    assert answer_checks.quote_found("\u201cWednesday at 11:00 \u2026 OPS-1182\u201d", DEPLOY)
    assert answer_checks.quote_found("", DEPLOY)


def test_a_quote_not_in_the_content_is_not_found():
    assert not answer_checks.quote_found("Reviewed by Ben Okafor", DEPLOY)
    # Each piece must stand, in order.
    assert not answer_checks.quote_found("OPS-1182 ... Wednesday", DEPLOY)


def test_it_reads_claimed_absences_from_the_reason_too():
    claims = answer_checks.claimed_absences(
        "The request does not mention the rollout time, and there is no reviewer.", ["receipt"]
    )
    assert claims == ["receipt", "the rollout time", "reviewer"]


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("the rollout date or time", "Wednesday at 11:00"),
        ("that the deploy is scheduled on a weekday", "Wednesday at 11:00"),
        ("an independent reviewer", "Reviewed by Sara Lindqvist"),
        ("ticket number", "OPS-1182"),
        ("head count", "14"),
    ],
)
def test_a_paraphrased_absence_is_contradicted_by_a_fact_of_its_kind(claim, evidence):
    assert answer_checks.contradicted_absences("reject", "", [claim], DEPLOY) == [(claim, evidence)]


def test_a_denied_fact_does_not_contradict_an_absence():
    content = "No reviewer yet; Ben Okafor wrote it. No time has been set."
    assert answer_checks.contradicted_absences("reject", "", ["a reviewer"], content) == []
    assert answer_checks.contradicted_absences("reject", "", ["the time"], content) == []


def test_an_approve_claims_no_absence():
    assert answer_checks.contradicted_absences("approve", "", ["head count"], DEPLOY) == []


def test_the_quote_checks_run_only_when_a_quote_was_asked():
    def check(quote: str | None) -> answer_checks.Findings:
        reason = "It does not mention the time."
        return answer_checks.check_answer(
            "Casper", 1, "reject", reason, [], DEPLOY, [], quote=quote
        )

    assert not check(None)
    found = check("Reviewed by Ben")
    assert found.unquoted == "Reviewed by Ben"
    assert found.contradicted == (("the time", "Wednesday at 11:00"),)
    assert found


def test_a_turned_vote_is_found_only_when_asked_and_only_when_it_turned():
    def fine(own_last_vote: str | None) -> Findings:
        return check_answer(
            "Casper", 2, "approve", "Fine.", [], CONTENT, [], own_last_vote=own_last_vote
        )

    assert fine("reject").changed_from == "reject"
    assert not fine("approve")
    # Round 1, or the CHANGE_CHECK variant not asked: nothing to compare with.
    assert not fine(None)
