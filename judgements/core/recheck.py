"""What a check of an agent's answer found (judgements/core/answer_checks.py), said back
to the agent, and the conversation it is asked again in: pure, no Django. The quoted words
are the model's own, as JSON strings: data, like every reason in the prompts."""

from collections.abc import Sequence

from judgements.core.prompts import neutralise
from judgements.core.text import one_line_json


def recheck_note(
    stated: list[str],
    copied_agent: str | None,
    copied_round: int | None,
    unquoted: str | None = None,
    contradicted: Sequence[tuple[str, str]] = (),
    changed: tuple[str, str, int] | None = None,
) -> str:
    """What a check found in the agent's answer (judgements/core/answer_checks.py), said back
    to it. The quoted words are the model's own, as JSON strings: data, like every reason.

    A finding is about one part of the answer, not the vote: on the starter suite a bare
    "read the content again" turned correct rejects into approvals when the agent's
    criterion was violated for another reason (a deploy with a rollback plan but no
    reviewer), so the note says to keep the vote then.

    A turned vote (`changed`: the vote before, the vote now, the round before; the
    CHANGE_CHECK variant) is asked about the other way: the peers' words are no evidence
    about this agent's criterion, so the new vote stays only if its criterion calls for it.
    """
    findings = []
    if stated:
        quoted = ", ".join(one_line_json(item) for item in stated)
        findings.append(f"your answer calls missing {quoted}, but the content above does state it")
    if unquoted is not None:
        # The QUOTE variant's checks (judgements/core/answer_checks.py).
        findings.append(
            f"the words you quote, {one_line_json(unquoted)}, are not in the content above"
        )
    for claim, evidence in contradicted:
        findings.append(
            f"your answer says {one_line_json(claim)} is not stated, but the"
            f" content above says {one_line_json(evidence)}"
        )
    if copied_agent is not None:
        findings.append(
            f"your reason repeats word for word the reason {copied_agent} gave in round "
            f"{copied_round}, about {copied_agent}'s criterion, not yours"
        )
    if changed is None:
        judge_again = (
            "Judge your own criterion again on what the content states. If the content still"
            " violates it for another reason, keep your vote and give that reason; if not,"
            " change your vote."
        )
    else:
        before, now, last_round = changed
        findings.append(f'you voted "{before}" in round {last_round} and "{now}" now')
        judge_again = (
            "The other agents' votes and reasons are about their own criteria, not yours:"
            " they are no evidence about yours. Judge your own criterion again on what the"
            f' content states. Keep "{now}" only if your criterion, read against the'
            f' content, calls for it; if not, vote "{before}" again.'
        )
    return (
        "A check of your answer found that " + "; and ".join(findings) + f". {judge_again}"
        " Give your reason in your own words and answer with the JSON object again."
    )


def recheck_messages(
    messages: list[dict[str, str]], answer_text: str, note: str, token: str
) -> list[dict[str, str]]:
    """The same conversation, the agent's answer, and the check's note: asked once more."""
    return [
        *messages,
        {"role": "assistant", "content": neutralise(answer_text, token)},
        {"role": "user", "content": neutralise(note, token)},
    ]
