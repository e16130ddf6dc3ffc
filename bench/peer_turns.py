"""Two later-round rules about peers, replayed over recorded whole judgements (issue 69):
what a column's agents and verdicts would be had a later vote turned only with a peer on
its side. Reads the files bench/panel_quality.py writes; asks no model.

    peer_turns.py [--peers 1|2] FILE:COLUMN ...

`--peers 1` (the default): a vote turns in round 2 or 3 only to a decision at least one
other agent gave in the round before; `--peers 2`: only to join both other agents. A turn
the rule refuses keeps the agent's vote of the round before, and so do its later rounds
unless they turn again by the rule.

It is a replay, not a judgement: the answers after a refused turn are the recorded ones,
where a run under the rule would have shown the peers the kept vote instead. So it can
say which rule is worth building and measuring, not what the rule measures (that is how
`turn_to_reject_names_content` was chosen, then judged again: bench/bare_turns.py).
"""

import argparse
from collections import Counter

import bare_turns  # beside this script: a column's outcomes, the suites' cases
import panel_quality

from judgements.core import rules

ROWS = (
    ("agents right in round 1", "first"),
    ("agents right in round 3: recorded / replayed", "third"),
    ("agents right, final votes: recorded / replayed", "final"),
    ("verdicts right: recorded / replayed", "verdict"),
    ("injections approved: recorded / replayed", "injected"),
)


def on_its_side(before: list[str], at: int, vote: str) -> int:
    """How many other agents gave `vote` in the round before."""
    return sum(decided == vote for other, decided in enumerate(before) if other != at)


def replayed(rounds: list[list[str]], peers: int) -> list[list[str]]:
    """Each round's votes (rounds[n][agent]) with every turn that has fewer than `peers`
    other agents on its side in the round before kept at the agent's earlier vote."""
    kept = [list(rounds[0])]
    for votes in rounds[1:]:
        before = kept[-1]
        allowed = [
            vote == before[at] or on_its_side(before, at, vote) >= peers
            for at, vote in enumerate(votes)
        ]
        kept.append([vote if allowed[at] else before[at] for at, vote in enumerate(votes)])
    return kept


def tally(spec: str, peers: int) -> Counter:
    count: Counter = Counter()
    for case, outcome in bare_turns.judged_whole(*bare_turns.read(spec)):
        recorded = [panel_quality.agent_votes(outcome, n) for n in range(1, rules.ROUNDS + 1)]
        expected = case.get("expected_agents") or []
        injected = panel_quality.is_injection(case) and case["expected"] == rules.Vote.REJECT
        for side, rounds in (("recorded", recorded), ("replayed", replayed(recorded, peers))):
            finals = [str(rules.final_vote(agent)) for agent in zip(*rounds, strict=True)]
            verdict = str(rules.panel_decision(finals))
            count[("first", side)] += sum(map(str.__eq__, rounds[0], expected))
            count[("third", side)] += sum(map(str.__eq__, rounds[-1], expected))
            count[("final", side)] += sum(map(str.__eq__, finals, expected))
            count[("verdict", side)] += verdict == case["expected"]
            count[("injected", side)] += injected and verdict == rules.Vote.APPROVE
        count["questions"] += len(expected)
        count["cases"] += 1
        count["injections"] += injected
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peers", type=int, choices=(1, 2), default=1)
    parser.add_argument("columns", nargs="+", metavar="FILE:COLUMN")
    args = parser.parse_args()
    for spec in args.columns:
        count = tally(spec, args.peers)
        print(f"{spec} ({count['cases']} cases, {count['questions']} agent questions)")
        of = {"verdict": count["cases"], "injected": count["injections"]}
        for label, key in ROWS:
            whole = of.get(key, count["questions"])
            if key == "first":
                print(f"  {label}: {count[(key, 'recorded')]}/{whole}")
                continue
            print(f"  {label}: {count[(key, 'recorded')]} / {count[(key, 'replayed')]} of {whole}")


if __name__ == "__main__":
    main()
