"""One agent's answer in one round, as a vote is made: asked through `llm`, checked
(judgements/core/answer_checks.py) and asked once more if a check finds it calling
missing what the content states, copying a peer's reason or (with the CHANGE_CHECK
variant) turning its own vote of the round before. No database: the engine stores what
it answers (engine/deliberation.py `decide`), and the quality bench's round-1 mode asks
exactly this (bench/panel_quality.py).
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from judgements.core import answer_checks, prompt_variants, prompts, recheck
from judgements.llm import calls, completions


@dataclass(frozen=True)
class Question:
    """What one agent is asked in one round, and what its answer is checked against."""

    agent_name: str
    round_number: int
    content: str
    earlier: list[prompts.EarlierDecision]
    variants: frozenset[prompts.Variant]
    messages: list[dict[str, str]]


def question(
    brief: prompts.AgentBrief,
    round_number: int,
    content: str,
    earlier: list[prompts.EarlierDecision],
    variants: frozenset[prompts.Variant],
) -> Question:
    """The one way a round's question is made, by the engine and the quality bench alike:
    its prompt, and the variants it is asked and decoded under in this round
    (prompt_variants.asked_in)."""
    messages = prompts.build_messages(brief, content, round_number, earlier, variants=variants)
    asked = prompt_variants.asked_in(variants, round_number)
    return Question(brief.name, round_number, content, earlier, asked, messages)


@dataclass(frozen=True)
class Hooks:
    """What the asking tells its caller: each failed attempt, an answer asked again, and
    the moment before it is asked again (the engine makes sure of its lease there: an
    answer later than the round's start, engine/lease.py). The first call needs no hook:
    it goes out as the round starts, just after the round made sure of its lease
    (engine/deliberation.py `run_round`)."""

    record_failure: calls.AttemptCallback
    record_rechecked: calls.AttemptCallback
    before_asking_again: Callable[[], Awaitable[None]]


async def ask(
    question: Question, clients: calls.Clients, route: completions.ModelRoute, hooks: Hooks
) -> calls.VerdictResult:
    """One agent's answer in one round: asked, checked (judgements/core/
    answer_checks.py), and asked once more if a check finds something. No database: the
    quality bench's round-1 mode asks exactly this (bench/panel_quality.py)."""
    result = await calls.request_verdict(
        clients, route, question.messages, hooks.record_failure, variants=question.variants
    )
    findings = answer_findings(
        question.agent_name,
        question.round_number,
        result.verdict,
        question.content,
        question.earlier,
        quoting=prompts.Variant.QUOTE in question.variants,
        checking_changes=prompts.Variant.CHANGE_CHECK in question.variants,
    )
    if not findings:
        return result
    # Not a vote as it stands: asked once more with the finding pointed out. What the
    # second answer says is stored, whatever it says; if the finding persists the
    # contested mark reports it (judgements/core/contested.py).
    await hooks.record_rechecked(result.attempt)
    again = recheck_messages(
        question.messages, result, findings, question.content, question.round_number
    )
    await hooks.before_asking_again()
    return await calls.request_verdict(
        clients,
        route,
        again,
        hooks.record_failure,
        first_attempt=result.attempt.attempt + 1,
        variants=question.variants,
    )


def answer_findings(
    agent_name: str,
    round_number: int,
    verdict: prompts.AgentVerdict,
    content: str,
    earlier: list[prompts.EarlierDecision],
    quoting: bool = False,
    checking_changes: bool = False,
) -> answer_checks.Findings:
    """What can be checked in the answer: a reject's `missing` items the content states,
    and a reason copied from a peer; with the QUOTE variant (`quoting`), its quote and
    the absences it claims in other words; with CHANGE_CHECK (`checking_changes`),
    whether it turned the agent's own vote of the round before."""
    own_last_vote = None
    if checking_changes:
        last = (agent_name, round_number - 1)
        own_last_vote = next((e.decision for e in earlier if (e.agent_name, e.round) == last), None)
    return answer_checks.check_answer(
        agent_name,
        round_number,
        verdict.decision,
        verdict.reason,
        verdict.missing,
        content,
        [answer_checks.EarlierReason(e.agent_name, e.round, e.reason) for e in earlier],
        quote=verdict.quote if quoting else None,
        own_last_vote=own_last_vote,
    )


def recheck_messages(
    messages: list[dict[str, str]],
    result: calls.VerdictResult,
    findings: answer_checks.Findings,
    content: str,
    round_number: int,
) -> list[dict[str, str]]:
    """The conversation asked once more: the answer as it came, and what the checks found."""
    note = recheck_note(findings, result.verdict.decision, round_number)
    return recheck.recheck_messages(
        messages, result.attempt.response_text, note, prompts.fence_token(content)
    )


def recheck_note(findings: answer_checks.Findings, decision: str, round_number: int) -> str:
    copied = findings.copied
    turned = findings.changed_from
    return recheck.recheck_note(
        list(findings.stated),
        copied.agent_name if copied else None,
        copied.round if copied else None,
        unquoted=findings.unquoted,
        contradicted=findings.contradicted,
        changed=None if turned is None else (turned, decision, round_number - 1),
    )
