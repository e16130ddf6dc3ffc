"""Later rounds on recorded first answers (bench/panel_quality.py --later-rounds-from).

Round 3 is measured against round 1 on the same run (issue 54: "later rounds keep the
agents at least as right as round 1"), and round 1 itself moves between runs of the same
prompts on a server with parallel slots (docs/panel-quality.md). To compare ways of
running the later rounds without that noise, each case's round-1 votes and reasons are
taken from a run already made and stored as the judgement's round-1 decisions before the
engine runs it; the engine then runs the rounds still to run, 2 and 3, as it does for a
judgement taken over from a worker whose lease ran out (engine/deliberation.py). Every
column then starts from the same first answers, and a case costs six agent calls instead
of nine.

The rows stored here stand for answers a model gave in the recorded run: they carry no
attempt and no log entry (the bench's database is thrown away). What the recorded run
kept of an answer is its vote and reason; its `missing` list is not kept, so the later
rounds show none.
"""

import json
from pathlib import Path

from judgements.core import rules
from judgements.models import Judgement, RoundDecision

# A case's first answers: (decision, reason) for each agent, in panel order.
FirstAnswers = list[tuple[str, str]]


def recorded(source: str) -> dict[str, FirstAnswers]:
    """The first answers of every case in `source`, "FILE:COLUMN" (a file --json-out wrote,
    a column of whole judgements or of round-1 answers in it), by case id. ValueError,
    saying what is wrong, for a file or column that does not hold them."""
    path, _, column = source.rpartition(":")
    if not path or not column:
        raise ValueError(f"{source!r}: give FILE:COLUMN, the column of a run's file")
    dump = json.loads(Path(path).read_text())
    mode = dump.get("mode", "full")
    if mode not in ("full", "round-1"):
        raise ValueError(f"{path} holds a {mode} run, not first answers")
    outcomes = dump.get("outcomes", {})
    if column not in outcomes:
        raise ValueError(f"{path} has no column {column!r} (it has {sorted(outcomes)})")
    # A whole judgement keeps each agent's three votes in a row; round-1 answers one each.
    rounds = rules.ROUNDS if mode == "full" else 1
    whole = rules.PANEL_SIZE * rounds
    answers: dict[str, FirstAnswers] = {}
    for case_id, outcome in outcomes[column].items():
        votes, reasons = outcome.get("votes", ""), outcome.get("reasons") or []
        if len(votes) != whole or len(reasons) != whole:
            continue  # an error, or a run that did not keep its reasons
        answers[case_id] = [
            ("approve" if votes[at] == "A" else "reject", reasons[at])
            for at in range(0, whole, rounds)
        ]
    if not answers:
        raise ValueError(f"{source}: no first answers with their reasons kept")
    return answers


def split(first: FirstAnswers) -> bool:
    """Whether the agents' first answers disagree: where the later rounds have a vote to
    settle. (In the held-out re-run every vote lost between round 1 and round 3 was in
    such a case; docs/panel-quality.md.)"""
    return len({decision for decision, _ in first}) > 1


def store(judgement: Judgement, first: FirstAnswers) -> None:
    """`first` as the judgement's round-1 decisions, before the engine runs it."""
    agents = list(judgement.agents.order_by("position"))
    RoundDecision.objects.bulk_create(
        RoundDecision(agent=agent, round=1, decision=decision, reason=reason)
        for agent, (decision, reason) in zip(agents, first, strict=True)
    )
