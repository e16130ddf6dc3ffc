"""Rounds 2 and 3 as the same chat as round 1: the CONTINUED_CHAT variant (issue 69).
Pure, no Django.

On Qwen2.5-Coder-1.5B a later round asked in another framing than round 1 turned votes
toward that framing's lean more than toward anything the other agents found: round 1
after worked examples, then the default's later rounds (the rules in a system message,
the content between marker lines), turned 33 votes to reject on the held-out cases, 26 of
them wrong; round 1 and the later rounds both in the user's words, but the later ones
laid out anew with the panel's answers listed, turned 31 votes to approve on the choosing
cases, 22 of them wrong. The default's three rounds, asked in one framing, turned 8 of 288.

So here a later round changes nothing of what the agent was asked. Its round-1 chat goes
on: its own answer of each earlier round as its turn (as it was asked to write it, in
that round's keys), then a turn with the other agents' answers of that round, fenced as
data, and the question again. Every earlier decision and reason of every agent is in the
chat, as the specification asks; and the chat so far is the prefix of the next round's,
so a local server reads it from its cache.

Measured after the worked examples on the 56 choosing cases, the agents turned few votes
(6 of 336) but five of them wrongly, rejects to approvals: round 3 is 4 votes below
round 1 (docs/panel-quality.md, "`continued_chat` after the worked examples"). A
variant, not the default.
"""

from collections.abc import Sequence

from judgements.core import plain_question, prompt_variants
from judgements.core.briefs import AgentBrief, EarlierDecision
from judgements.core.text import one_line_json

# The other agents' answers in a code block they cannot close, one line each, the reason a
# JSON string (no reason can start a line of its own), then round 1's question again with
# the round before its rule: asked only "answer again about your criterion", agents judged
# the answers as the content ("the content does not mention any criterion").
PEERS = """\
The other agents' answers in round {round}, each about its own criterion, not yours
(data, one per line: agent, vote, reason):
{block}

The question again, on the same content:

{question}"""


def later_turns(
    agent: AgentBrief,
    content: str,
    earlier: Sequence[EarlierDecision],
    round_number: int,
    rounds: int,
    variants: frozenset[prompt_variants.Variant],
    answer_with: str | None = None,
) -> list[dict[str, str]]:
    """The turns after round 1's question up to round `round_number`'s: for each earlier
    round, the agent's own answer, then the others' answers with round 1's question asked
    again for the next round. `answer_with`: another last line for the last question (the
    confidence probe's one word) instead of the user's JSON line."""
    turns = []
    for said in range(1, round_number):
        answers = sorted((d for d in earlier if d.round == said), key=lambda d: d.agent_name)
        keys = prompt_variants.round_keys(variants, said)
        turns += [
            {"role": "assistant", "content": own_answer(d, keys)}
            for d in answers
            if d.agent_name == agent.name
        ]
        others = [d for d in answers if d.agent_name != agent.name]
        last = answer_with if said + 1 == round_number else None
        again = plain_question.user_text(
            [agent.criteria],
            content,
            answer_with=last,
            before_rule=f"This is round {said + 1} of {rounds}. ",
        )
        text = PEERS.format(round=said, block=peers_block(others), question=again)
        turns.append({"role": "user", "content": text})
    return turns


def own_answer(answer: EarlierDecision, keys: Sequence[str]) -> str:
    return prompt_variants.answer_json(keys, answer.reason, answer.decision, answer.missing)


def peers_block(others: Sequence[EarlierDecision]) -> str:
    lines = "\n".join(f"{d.agent_name}, {d.decision}: {one_line_json(d.reason)}" for d in others)
    return plain_question.in_block(lines)
