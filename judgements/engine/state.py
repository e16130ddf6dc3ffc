"""What the engine knows about one judgement while it runs it: its agents and every vote
stored so far. Plain data read from the database (engine/storage.py loads it); the
questions asked of it (who is undecided, which round is under way, what the agents see
of earlier rounds) need no database."""

from dataclasses import dataclass, field

from judgements.core import prompts, rules
from judgements.models import Agent, Judgement, RoundDecision


@dataclass
class Deliberation:
    """A judgement, its three agents and every vote stored so far, keyed (agent, round)."""

    judgement: Judgement
    agents: list[Agent]
    votes: dict[tuple[int, int], RoundDecision]
    # The checks beside the vote already stored with a finding, as (kind, agent id or
    # None): a resumed judgement asks only the others (engine/checks.py).
    checks_done: set[tuple[str, int | None]] = field(default_factory=set)

    def earlier_decisions(self, round_number: int) -> list[prompts.EarlierDecision]:
        names = {agent.pk: agent.name for agent in self.agents}
        return [
            prompts.EarlierDecision(names[agent_id], rnd, d.decision, d.reason)
            for (agent_id, rnd), d in sorted(self.votes.items(), key=lambda kv: kv[0][::-1])
            if rnd < round_number
        ]

    def agent_votes(self, agent: Agent) -> list[str]:
        return [
            self.votes[(agent.pk, rnd)].decision
            for rnd in range(1, rules.ROUNDS + 1)
            if (agent.pk, rnd) in self.votes
        ]

    def undecided(self, round_number: int) -> list[Agent]:
        return [agent for agent in self.agents if (agent.pk, round_number) not in self.votes]

    def round_under_way(self) -> int:
        return rules.round_under_way([len(self.agent_votes(agent)) for agent in self.agents])
