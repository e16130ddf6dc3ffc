"""A panel edit reads top to bottom (issue 57, docs/architecture.md): from the view to the
row it passes through at most 8 files and never comes back to one it left, and the page
states what it measures (the figure bench/panel_path.py prints).

The walk runs in a process of its own (bench/panel_path.py --json), on a database of its
own, as tests/packaging/test_judgement_path.py runs a judgement's."""

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.support import panel_path

REPO = Path(__file__).resolve().parents[2]
ARCHITECTURE = REPO / "docs" / "architecture.md"
# How the page words its figure, in bold: "**6 files, 0 returns**".
FIGURE = re.compile(r"\*\*(\d+) files, (\d+) returns\*\*")
MOST_FILES = 8


def walked(*options: str) -> panel_path.PanelWalk:
    done = subprocess.run(
        [sys.executable, "bench/panel_path.py", "--json", *options],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    walk = panel_path.PanelWalk(panel_path.PANEL_ID)
    walk.stops = [(path, name, entered) for path, name, entered in json.loads(done.stdout)["stops"]]
    return walk


def test_a_panel_edit_goes_down_through_few_files_and_never_back():
    walk = walked()
    entries = walk.entries()
    assert len(entries) <= MOST_FILES, entries
    assert walk.files_left_and_entered_again() == 0, "\n".join(
        f"{'>' if entered else ' '} {path}: {name}" for path, name, entered in walk.stops
    )
    # From the view to the row: the edit's form, and the row written.
    assert walk.stops[0][:2] == ("web/panel_pages.py", "panel_edit")
    assert ("configuration/versions.py", "bump") in [stop[:2] for stop in walk.stops]
    (figure,) = FIGURE.findall(ARCHITECTURE.read_text(encoding="utf-8"))
    assert (int(figure[0]), int(figure[1])) == (len(entries), 0), (
        "copy the figure bench/panel_path.py prints into docs/architecture.md"
    )


def test_an_edit_naming_a_panel_to_escalate_to_goes_down_too():
    """The escalation rule (docs/escalation.md) is checked on the way down, where the
    panel is written, not by a detour from the form and back."""
    walk = walked("--escalating")
    assert len(walk.entries()) <= MOST_FILES, walk.entries()
    assert walk.files_left_and_entered_again() == 0, "\n".join(
        f"{'>' if entered else ' '} {path}: {name}" for path, name, entered in walk.stops
    )
    assert ("panels/escalation_chain.py", "target_errors") in [stop[:2] for stop in walk.stops]


def test_the_walk_counts_a_file_left_and_entered_again():
    walk = panel_path.PanelWalk(panel_path.PANEL_ID)
    walk.stops = [
        ("web/panel_pages.py", "panel_edit", True),
        ("configuration/saving.py", "store", True),
        ("configuration/saving.py", "write", False),
        ("models/panels.py", "Panel.config_state", True),
        ("configuration/saving.py", "write", True),
    ]
    assert walk.files_left_and_entered_again() == 1
    assert walk.entries() == {
        "web/panel_pages.py": 1,
        "configuration/saving.py": 2,
        "models/panels.py": 1,
    }


def test_what_carries_the_panel():
    walk = panel_path.PanelWalk(panel_path.PANEL_ID)

    class Row:
        def __init__(self, pk: int) -> None:
            self.pk = pk

    Row.__name__ = "Panel"

    class Form:
        def __init__(self, panel: object) -> None:
            self.panel = panel

    assert walk.carries(panel_path.PANEL_ID)
    assert walk.carries(Row(panel_path.PANEL_ID))
    assert walk.carries(Form(Row(panel_path.PANEL_ID)))
    assert not walk.carries(Row(1)) and not walk.carries(7) and not walk.carries("4243")
