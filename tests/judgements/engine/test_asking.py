"""One agent's answer in one round (judgements/engine/asking.py): asked through the real
SDK of the suite's fake LLM server, checked, and asked once more when a check finds
something, with no database."""

from judgements.core.prompts import AgentBrief, build_messages
from judgements.engine import asking
from judgements.llm import calls, providers
from tests.support.llm_server import RECHECK_MARKER

CONTENT = "Trip to Lyon for the trade fair. Budget: 900 EUR, approved by Ana."


async def asked(model: str) -> tuple[calls.VerdictResult, list[str]]:
    """The answer, and what the asking told its caller, in order."""
    told: list[str] = []

    async def failed(entry: calls.AttemptRecord) -> None:
        told.append("failed")

    async def rechecked(entry: calls.AttemptRecord) -> None:
        told.append(f"rechecked {entry.attempt}")

    async def before_call() -> None:
        told.append("call")

    messages = build_messages(AgentBrief("Melchior", "A budget is stated."), CONTENT, 1, [])
    question = asking.Question("Melchior", 1, CONTENT, [], frozenset(), messages)
    hooks = asking.Hooks(failed, rechecked, before_call)
    result = await asking.ask(question, calls.Clients(), providers.route_for(model), hooks)
    return result, told


async def test_an_answer_the_checks_find_nothing_in_is_asked_once(fake_llm):
    fake_llm.script("model-a", votes="AAA")
    result, told = await asked("model-a")
    assert result.verdict.decision == "approve"
    assert told == ["call"]
    assert len(fake_llm.requests_for("model-a")) == 1


async def test_a_reject_calling_missing_what_the_content_states_is_asked_once_more(fake_llm):
    fake_llm.script("model-a", votes="RRR", missing=["budget"], recheck_votes="AAA")
    result, told = await asked("model-a")
    # The first answer is kept for the audit; the second, asked with the finding, is
    # the vote, whatever it says.
    assert told == ["call", "rechecked 1", "call"]
    assert result.verdict.decision == "approve"
    assert result.attempt.attempt == 2
    again = fake_llm.requests_for("model-a")[-1].body["messages"][-1]["content"]
    assert again.startswith(RECHECK_MARKER) and "budget" in again
