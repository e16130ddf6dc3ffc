"""Turns to reject on a reason that names nothing of the content, replayed over recorded later
rounds (issue 69: the TURN_TO_REJECT_NAMES_CONTENT variant, judgements/core/own_criterion.py
`bare_turn_to_reject`). Reads the files bench/panel_quality.py writes; asks no model.

    count FILE:COLUMN ...          each column's turns from approve to reject, by whether
                                   the reason names the content and whether the turn was right
    cases FILE:COLUMN              the ids of the cases with a bare turn, for --cases
    fill OUT FILE:COLUMN RERUN...  one file: the recorded column for every case, with the
                                   cases the reruns hold replaced by each rerun column's

A rule that leaves a vote as it was changes nothing where no answer turns that way, so
its whole-judgement effect is measured by running again, side by side with and without
it, only the cases where a recorded run turned so (`cases`), and filling the others in
from the record (`fill`). Two runs of the same later rounds differ in few cases (22 of
23 choosing2 cases gave the same nine votes twice, docs/panel-quality.md).
"""

import argparse
import functools
import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import panel_quality  # beside this script: its suites and panels, with Django set up
from panel_quality import Outcome

from judgements.core import own_criterion, rules


def refuse(message: str) -> NoReturn:
    """A bad argument: said on stderr, exit 2, as argparse does."""
    print(f"bare_turns.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def read(spec: str) -> tuple[dict, dict[str, dict]]:
    """A results file and one column's outcomes, from FILE:COLUMN."""
    path, _, column = spec.rpartition(":")
    try:
        data = json.loads(Path(path).read_text())
        return data, data["outcomes"][column]
    except (OSError, ValueError, KeyError) as exc:
        refuse(f"FILE:COLUMN {spec!r}: not a column of a results file ({exc!r})")


TO_REJECT = (rules.Vote.APPROVE, rules.Vote.REJECT)  # a vote of one round, then the next's


@functools.cache
def judged(suites: str) -> tuple[dict[str, dict], dict[str, dict]]:
    """The suites' cases by id and the example panels, read once however many columns
    name the same suites."""
    cases = {case["id"]: case for case in panel_quality.suite_cases(suites)}
    return cases, panel_quality.load_panels()


def judged_whole(data: dict, outcomes: dict[str, dict]) -> Iterator[tuple[dict, Outcome]]:
    """Each case of a column judged whole (every round, no error), with its outcome."""
    cases, _ = judged(data["suites"])
    for case_id, kept in outcomes.items():
        outcome = Outcome(**kept)
        if not outcome.error and panel_quality.rounds_of(outcome) == rules.ROUNDS:
            yield cases[case_id], outcome


def turns(data: dict, outcomes: dict[str, dict]) -> list[tuple[str, bool, bool]]:
    """Every turn from approve to reject in round 2 or 3 of a column: (case id, whether
    its reason names the content, whether reject was the agent's expected vote)."""
    _, panels = judged(data["suites"])
    found = []
    for case, outcome in judged_whole(data, outcomes):
        case_id = case["id"]
        rounds = [panel_quality.agent_votes(outcome, n) for n in range(1, rules.ROUNDS + 1)]
        for at, agent in enumerate(panels[case["panel"]]["agents"]):
            for later in range(1, rules.ROUNDS):
                if (rounds[later - 1][at], rounds[later][at]) != TO_REJECT:
                    continue
                said = at * rules.ROUNDS + later  # the reasons are agent-major, as the votes
                earlier = [(rules.Vote.APPROVE, outcome.reasons[said - 1])]
                bare = own_criterion.bare_turn_to_reject(
                    rules.Vote.REJECT,
                    outcome.reasons[said],
                    earlier,
                    case["content"],
                    agent["criteria"],
                )
                found.append((case_id, not bare, case["expected_agents"][at] == rules.Vote.REJECT))
    return found


def count(specs: list[str]) -> None:
    for spec in specs:
        tally = Counter((names, right) for _, names, right in turns(*read(spec)))
        print(spec)
        for names in (False, True):
            label = "names the content" if names else "names nothing of it"
            right, wrong = tally[(names, True)], tally[(names, False)]
            print(f"  {label}: {right} right, {wrong} wrong")


def cases(spec: str) -> None:
    print(",".join(sorted({case_id for case_id, names, _ in turns(*read(spec)) if not names})))


def fill(out: Path, spec: str, reruns: list[str]) -> None:
    data, recorded = read(spec)
    columns: dict[str, dict] = {}
    for path in reruns:
        try:
            rerun = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            refuse(f"RERUN {path!r}: not a results file ({exc!r})")
        source = rerun.get("later_rounds_from")
        if source != data.get("later_rounds_from"):
            refuse(f"RERUN {path!r}: later rounds from {source!r}, not the record's")
        for column, outcomes in rerun["outcomes"].items():
            columns.setdefault(column, {}).update(outcomes)
    filled = {key: value for key, value in data.items() if key != "outcomes"}
    filled["outcomes"] = {column: {**recorded, **rerun} for column, rerun in columns.items()}
    out.write_text(json.dumps(filled, indent=2))
    print(out, {column: f"{len(rerun)} run again" for column, rerun in columns.items()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    modes = parser.add_subparsers(dest="mode", required=True)
    modes.add_parser("count").add_argument("columns", nargs="+", metavar="FILE:COLUMN")
    modes.add_parser("cases").add_argument("column", metavar="FILE:COLUMN")
    filling = modes.add_parser("fill")
    filling.add_argument("out", type=Path)
    filling.add_argument("column", metavar="FILE:COLUMN")
    filling.add_argument("reruns", nargs="+", metavar="RERUN")
    args = parser.parse_args()
    if args.mode == "count":
        count(args.columns)
    elif args.mode == "cases":
        cases(args.column)
    else:
        fill(args.out, args.column, args.reruns)


if __name__ == "__main__":
    main()
