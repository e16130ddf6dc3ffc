"""One agent's answer in one round (judgements/engine/asking.py): asked through the real
SDK of the suite's fake LLM server, checked, and asked once more when a check finds
something, with no database."""

import json

from judgements.core.prompt_variants import Variant
from judgements.core.prompts import AgentBrief, EarlierDecision, build_messages
from judgements.engine import asking
from judgements.llm import calls, providers
from tests.support.llm_server import RECHECK_MARKER

CONTENT = "Trip to Lyon for the trade fair. Budget: 900 EUR, approved by Ana."
BRIEF = AgentBrief("Melchior", "A budget is stated.")


async def asked(model: str) -> tuple[calls.VerdictResult, list[str]]:
    """The answer, and what the asking told its caller, in order."""
    told: list[str] = []

    async def failed(entry: calls.AttemptRecord) -> None:
        told.append("failed")

    async def rechecked(entry: calls.AttemptRecord) -> None:
        told.append(f"rechecked {entry.attempt}")

    async def before_asking_again() -> None:
        told.append("asking again")

    messages = build_messages(BRIEF, CONTENT, 1, [])
    question = asking.Question("Melchior", 1, CONTENT, [], frozenset(), messages)
    hooks = asking.Hooks(failed, rechecked, before_asking_again)
    result = await asking.ask(question, calls.Clients(), providers.route_for(model), hooks)
    return result, told


async def test_an_answer_the_checks_find_nothing_in_is_asked_once(fake_llm):
    fake_llm.script("model-a", votes="AAA")
    result, told = await asked("model-a")
    assert result.verdict.decision == "approve"
    assert told == []
    assert len(fake_llm.requests_for("model-a")) == 1


async def test_a_reject_calling_missing_what_the_content_states_is_asked_once_more(fake_llm):
    fake_llm.script("model-a", votes="RRR", missing=["budget"], recheck_votes="AAA")
    result, told = await asked("model-a")
    # The first answer is kept for the audit; the second, asked with the finding, is
    # the vote, whatever it says.
    assert told == ["rechecked 1", "asking again"]
    assert result.verdict.decision == "approve"
    assert result.attempt.attempt == 2
    again = fake_llm.requests_for("model-a")[-1].body["messages"][-1]["content"]
    assert again.startswith(RECHECK_MARKER) and "budget" in again


async def round_one(fake_llm, variants: frozenset[Variant], votes: str):
    """Round 1 asked of one agent under `variants`: its result, and the one request sent."""
    fake_llm.script("model-a", votes=votes)
    first = asking.question(BRIEF, 1, CONTENT, [], variants)
    hooks = asking.Hooks(nothing, nothing, nothing_before)
    result = await asking.ask(first, calls.Clients(), providers.route_for("model-a"), hooks)
    (request,) = fake_llm.requests_for("model-a")
    return result, request


async def test_user_words_round_one_asks_the_users_words_and_decodes_no_missing(fake_llm):
    variants = frozenset({Variant.USER_WORDS, Variant.TURN_NEEDS_REASON})
    _, request = await round_one(fake_llm, variants, "AAA")
    (message,) = request.body["messages"]
    assert message["content"].startswith("Criterion:\nA budget is stated.")
    assert "missing" not in json.dumps(request.body["response_format"])
    # From round 2, the default's question and answer, `missing` included.
    later = asking.question(BRIEF, 2, CONTENT, [], variants)
    assert later.messages == build_messages(BRIEF, CONTENT, 2, [], variants=variants)
    assert Variant.NO_MISSING not in later.variants


async def test_worked_examples_are_sent_as_earlier_turns_before_the_users_words(fake_llm):
    variants = frozenset({Variant.WORKED_EXAMPLES, Variant.TURN_NEEDS_REASON})
    result, request = await round_one(fake_llm, variants, "RRR")
    assert result.verdict.decision == "reject"
    sent = request.body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant"] * 4 + ["user"]
    assert sent[-1]["content"].startswith("Criterion:\nA budget is stated.")
    assert json.loads(sent[1]["content"])["decision"] == "approve"
    assert "missing" not in json.dumps(request.body["response_format"])


async def round_two(fake_llm, variants: frozenset[Variant]):
    """Round 2 asked of one agent under `variants`, after its round-1 approval: the one
    request sent, its answer checked to be round 2's of the script (the fake server reads
    the round from the prompt: round 2 of "ARA" rejects)."""
    fake_llm.script("model-a", votes="ARA")
    earlier = [EarlierDecision("Melchior", 1, "approve", "Budget: 900 EUR.")]
    later = asking.question(BRIEF, 2, CONTENT, earlier, variants)
    hooks = asking.Hooks(nothing, nothing, nothing_before)
    result = await asking.ask(later, calls.Clients(), providers.route_for("model-a"), hooks)
    assert result.verdict.decision == "reject"
    (request,) = fake_llm.requests_for("model-a")
    return request


async def test_plain_later_asks_round_two_in_the_users_words_and_decodes_no_missing(fake_llm):
    variants = frozenset({Variant.USER_WORDS, Variant.PLAIN_LATER, Variant.TURN_NEEDS_REASON})
    request = await round_two(fake_llm, variants)
    (message,) = request.body["messages"]
    assert message["role"] == "user" and "round 1, Melchior (you), approve" in message["content"]
    assert "missing" not in json.dumps(request.body["response_format"])


async def test_continued_chat_asks_round_two_after_round_ones_chat_and_decodes_no_missing(
    fake_llm,
):
    request = await round_two(
        fake_llm, frozenset({Variant.WORKED_EXAMPLES, Variant.CONTINUED_CHAT})
    )
    sent = request.body["messages"]
    # The four examples, round 1's question, its answer, and round 2's question.
    assert [m["role"] for m in sent] == ["user", "assistant"] * 5 + ["user"]
    assert json.loads(sent[-2]["content"])["reason"] == "Budget: 900 EUR."
    assert "missing" not in json.dumps(request.body["response_format"])


async def nothing(entry: calls.AttemptRecord) -> None:
    return None


async def nothing_before() -> None:
    return None
