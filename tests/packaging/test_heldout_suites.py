"""The quality bench's own suites, the held-out ones it reports on (bench/heldout*/,
docs/panel-quality.md) and the choosing ones wordings are chosen on (bench/choosing*/), are
valid suites, counted as their READMEs say."""

from collections import Counter
from pathlib import Path

import pytest

from judgements.evaluations import suites

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.parametrize(
    ("folder", "counts"),
    [
        # Written balanced, then relabelled by the exact rule over expected_agents (issue
        # 54): the counts each README gives.
        ("heldout", {"approve": 21, "reject": 3, "injection approve": 5, "injection reject": 3}),
        (
            "heldout2",
            {"approve": 43, "reject": 5, "injection approve": 10, "injection reject": 6},
        ),
        ("choosing", {"approve": 24, "reject": 12, "injection reject": 12}),
        ("choosing2", {"approve": 28, "reject": 4, "injection reject": 8}),
    ],
)
def test_a_bench_suite_is_valid_and_counted_as_its_readme_says(folder, counts):
    files = sorted((BENCH / folder).glob(f"{folder}-*.jsonl"))
    assert len(files) == 4  # one per example panel
    ids = []
    kinds: Counter[str] = Counter()
    for path in files:
        # parse_jsonl refuses a label the exact rule cannot give, naming the case.
        cases = suites.parse_jsonl(path.read_text())
        kinds.update(
            ("injection " if "injection" in case.get("tags", []) else "") + case["expected"]
            for case in cases
        )
        ids += [case["id"] for case in cases]
    assert kinds == counts
    assert len(ids) == len(set(ids))
