"""The second opinion beside the vote (issue 69, item 2): round-1 wordings of the plain
call per criterion, each read with a told-the-rule call's verdict as its second opinion,
its disagreement marking the verdict contested (as the engine's second opinion does).

Every wording measured trades approvals where a criterion holds against injections
approved (docs/panel-quality.md). The issue's idea is to move the injection defence
out of the agents' framing and beside the vote, where it never votes. This script reads
recorded columns and does not call a model:

    R=bench/results
    .venv/bin/python bench/opinion_beside.py \\
        --opinion "$R/round1-qwen1.5b-choosing-told-the-rule.json:plain told the rule" \\
        --columns "$R/round1-qwen1.5b-choosing-per-criterion.json:plain per criterion [user],..."

Per column, on the cases every column and the opinion reached: verdicts right, injections
approved, those of them the opinion leaves unmarked, verdicts marked, and how often the
marked and unmarked verdicts are right, each with its 95 % Wilson interval.
"""

import argparse
import json
from pathlib import Path

import panel_quality as pq  # Django is set up there, on a database of its own

Verdicts = dict[str, str]  # case id -> approve, reject or error


def column(spec: str) -> tuple[str, Verdicts]:
    """FILE:COLUMN of a panel_quality.py run: the column's name and its verdicts."""
    path, _, name = spec.partition(":")
    outcomes = json.loads(Path(path).read_text())["outcomes"][name]
    return name, {case_id: outcome["verdict"] for case_id, outcome in outcomes.items()}


def rows(verdicts: Verdicts, opinion: Verdicts, cases: list[dict]) -> dict[str, str]:
    def is_marked(case: dict) -> bool:
        return verdicts[case["id"]] != opinion[case["id"]]

    marked = [case for case in cases if is_marked(case)]
    unmarked = [case for case in cases if not is_marked(case)]
    injected = [case for case in cases if pq.is_injection(case) and case["expected"] == "reject"]
    passed = [case for case in injected if verdicts[case["id"]] == "approve"]

    def right(some: list[dict]) -> int:
        return sum(verdicts[case["id"]] == case["expected"] for case in some)

    return {
        "verdicts right": pq.share(right(cases), len(cases)),
        "injections approved": pq.share(len(passed), len(injected)),
        "... and not marked": pq.share(sum(not is_marked(c) for c in passed), len(injected)),
        "marked contested": pq.share(len(marked), len(cases)),
        "right when marked": pq.share(right(marked), len(marked)),
        "right when unmarked": pq.share(right(unmarked), len(unmarked)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opinion", required=True, help="FILE:COLUMN read as the opinion")
    parser.add_argument("--columns", required=True, help="FILE:COLUMN, comma-separated")
    parser.add_argument("--suites", default="choosing,starter,redteam")
    args = parser.parse_args()
    _, opinion = column(args.opinion)
    columns = dict(column(spec) for spec in args.columns.split(","))
    reached = set(opinion).intersection(*columns.values())
    cases = [case for case in pq.suite_cases(args.suites) if case["id"] in reached]
    table = {name: rows(verdicts, opinion, cases) for name, verdicts in columns.items()}
    print(f"{len(cases)} cases; opinion: {args.opinion}")
    print(" " * 24 + "".join(f"{name[-26:]:>28}" for name in table))
    for row in next(iter(table.values())):
        print(f"{row:24}" + "".join(f"{table[name][row]:>28}" for name in table))


if __name__ == "__main__":
    main()
