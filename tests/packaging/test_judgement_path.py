"""One judgement reads top to bottom (docs/architecture.md): its path from claim to push,
followed by its id through every call (tests/support/judgement_path.py), enters files as
often as the page says, no more and no less: a change to the engine that adds or saves a
trip between files changes the figure, and the page is updated with it (the figure line
bench/judgement_path.py prints).

The walk runs in a process of its own (bench/judgement_path.py --json): a thread is
followed only from its start, and a worker of this test run has database threads from
earlier tests."""

import contextvars
import json
import re
import subprocess
import sys
from pathlib import Path

from judgements.infrastructure import events
from judgements.outcome import overrides
from tests.support import judgement_path

REPO = Path(__file__).resolve().parents[2]
ARCHITECTURE = REPO / "docs" / "architecture.md"
# How the page words its figure, in bold: "**69 entries into 8 files**".
FIGURE = re.compile(r"\*\*(\d+) entries into (\d+) files\*\*")


def published() -> dict[str, int]:
    """The figure docs/architecture.md publishes, read from the page."""
    found = FIGURE.findall(ARCHITECTURE.read_text(encoding="utf-8"))
    assert len(found) == 1, f"docs/architecture.md states its path figure once: {found}"
    entries, files = found[0]
    return {"entries": int(entries), "files": int(files)}


def walk(*options: str) -> judgement_path.Walk:
    done = subprocess.run(
        [sys.executable, "bench/judgement_path.py", "--json", *options],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["status"] in ("approved", "rejected")
    walked = judgement_path.Walk()
    walked.stops = [(path, name, entered) for path, name, entered in found["stops"]]
    return walked


def measured(path: judgement_path.Walk) -> dict[str, int]:
    figures = path.figures()
    return {"entries": figures["entries"], "files": figures["files"]}


def test_the_page_states_what_one_judgement_measures():
    path = walk()
    assert measured(path) == published(), (
        "docs/architecture.md's path figure is not what one judgement measures: copy the "
        "figure bench/judgement_path.py prints into the page.\n"
        + "\n".join(f"{times}x {file}" for file, times in path.entries().most_common())
    )
    # The walk starts where the engine takes the judgement and follows it to its verdict's
    # webhook.
    assert path.stops[0][:2] == ("engine/runner.py", "EngineRunner.run_judgement")
    assert ("outcome/webhooks.py", "enqueue") in [stop[:2] for stop in path.stops]


def test_the_walk_leaves_out_the_lease_s_upkeep():
    """Renewals fall when the clock says: with one due every few milliseconds the walk
    names no renewal, and its figure is the same."""
    path = walk("--lease-seconds", "0.01")
    assert not [stop for stop in path.stops if "renew" in stop[1]], path.stops
    assert measured(path) == published()


def calls_between_two_files() -> None:
    """A file, another, the first again: twice over. Plain functions of judgements/ that
    take the judgement's id and touch nothing."""
    for _ in range(2):
        events.group_name_for(judgement_path.JUDGEMENT_ID)
        events.group_name_for(judgement_path.JUDGEMENT_ID)
        overrides.already_overridden(judgement_path.JUDGEMENT_ID)


def test_every_call_is_a_stop_and_every_return_to_a_file_an_entry():
    walked = judgement_path.Walk()
    sys.setprofile(walked.profile)
    try:
        contextvars.Context().run(calls_between_two_files)
    finally:
        sys.setprofile(None)
    assert [stop[1] for stop in walked.stops] == [
        "group_name_for",
        "group_name_for",
        "already_overridden",
    ] * 2
    assert walked.entries() == {"infrastructure/events.py": 2, "outcome/overrides.py": 2}
    assert walked.figures() == {"stops": 6, "entries": 4, "files": 2}
