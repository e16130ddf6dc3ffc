"""One-click examples for a first try: a shipped example panel with a case of its own
starter suite, one it should approve and one it should reject.

The new-judgement page lists them (`offered`); following one fills the title, the
content and the panel's agents (`find`), and the judgement records the panel like any.
"""

import functools
from dataclasses import dataclass

from judgements.evaluations import suites
from judgements.models import Panel

STARTER_SUITES = suites.EXAMPLES_DIR


@dataclass(frozen=True)
class Example:
    panel: Panel
    case_id: str
    title: str
    content: str
    expected: str

    @property
    def label(self) -> str:
        should = "should pass" if self.expected == "approve" else "should be rejected"
        return f"{self.title} ({should})"


@functools.cache
def starter_cases(panel_name: str) -> tuple[suites.CleanedSuiteCase, ...]:
    """Its starter suite's first case of each expected verdict (none if it ships none)."""
    path = STARTER_SUITES / f"starter-{panel_name}.jsonl"
    if not path.exists():
        return ()
    chosen: dict[str, suites.CleanedSuiteCase] = {}
    for case in suites.parse_jsonl(path.read_text(encoding="utf-8")):
        chosen.setdefault(case["expected"], case)
    return tuple(chosen[kind] for kind in ("approve", "reject") if kind in chosen)


def offered() -> list[Example]:
    """Two cases for each example panel loaded (manage.py load_examples)."""
    return [
        Example(panel, case["id"], case["title"], case["content"], case["expected"])
        for panel in Panel.objects.filter(owner__isnull=True).order_by("name")
        for case in starter_cases(panel.name)
    ]


def find(panel_name: str, case_id: str) -> Example | None:
    return next((e for e in offered() if e.panel.name == panel_name and e.case_id == case_id), None)
