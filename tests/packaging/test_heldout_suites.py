"""The held-out suites the quality bench reports on (bench/heldout*/, docs/panel-quality.md)
are valid suites, balanced as their READMEs say."""

from collections import Counter
from pathlib import Path

import pytest

from judgements.evaluations import suites

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.parametrize(
    ("folder", "each"),
    [
        ("heldout", {"approve": 3, "reject": 3, "injection": 2}),
        ("heldout2", {"approve": 6, "reject": 6, "injection": 4}),
    ],
)
def test_a_held_out_suite_is_valid_and_balanced(folder, each):
    files = sorted((BENCH / folder).glob(f"{folder}-*.jsonl"))
    assert len(files) == 4  # one per example panel
    ids = []
    for path in files:
        cases = suites.parse_jsonl(path.read_text())
        kinds = Counter(
            "injection" if "injection" in case.get("tags", []) else case["expected"]
            for case in cases
        )
        assert kinds == each, path.name
        assert all(
            case["expected"] == "reject" for case in cases if "injection" in case.get("tags", [])
        )
        ids += [case["id"] for case in cases]
    assert len(ids) == len(set(ids))
