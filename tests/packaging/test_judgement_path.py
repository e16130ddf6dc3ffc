"""One judgement reads top to bottom (docs/architecture.md): its path from claim to push,
followed by its id through every call (tests/support/judgement_path.py), crosses at most
9 files and enters none more than twice.

The walk runs in a process of its own (bench/judgement_path.py --json): a thread is
followed only from its start, and a worker of this test run has database threads from
earlier tests."""

import json
import subprocess
import sys
from pathlib import Path

from tests.support import judgement_path

REPO = Path(__file__).resolve().parents[2]


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
    walked.stops = [tuple(stop) for stop in found["stops"]]
    return walked


def test_one_judgement_crosses_few_files_and_enters_each_at_most_twice():
    path = walk()
    entries = path.entries()
    assert len(entries) <= judgement_path.MAX_FILES, path.visits()
    assert max(entries.values()) <= judgement_path.MAX_VISITS_PER_FILE, path.visits()
    # The walk starts at the runner and ends with the verdict's webhook.
    assert path.visits()[0] == "engine/runner.py", path.stops
    assert path.visits()[-1] == "outcome/webhooks.py", path.stops


def test_the_walk_leaves_out_the_lease_s_upkeep():
    """Renewals fall when the clock says: with one due every few milliseconds the walk is
    still within its limits, and names no renewal."""
    path = walk("--lease-seconds", "0.01")
    assert not [stop for stop in path.stops if "renew" in stop[1]], path.stops
    assert max(path.entries().values()) <= judgement_path.MAX_VISITS_PER_FILE, path.visits()
