"""What an agent's prompt is made from, besides the content: the agent (its name and its
criterion) and the answers of the rounds before. Plain data, pure, no Django; its own
module so that the prompt's parts (judgements/core/prompts.py, continued_chat.py) share
it without importing each other."""

from dataclasses import dataclass


@dataclass(frozen=True)
class EarlierDecision:
    agent_name: str
    round: int
    decision: str
    reason: str
    # The agent's criterion, shown beside its vote by the NAMED_PEERS variant.
    criterion: str = ""
    # What the answer said the content lacks (AgentVerdict.missing), for CONTINUED_CHAT,
    # which shows an agent its own earlier answers as it was asked to write them.
    missing: tuple[str, ...] = ()


@dataclass(frozen=True)
class AgentBrief:
    name: str
    criteria: str
