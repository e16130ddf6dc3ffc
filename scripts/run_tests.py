"""`make test`: the suite as two pytest sessions at once, on a machine of two cores.

One session runs the tests marked `one_at_a_time` (tests/environment.py: what needs one
of a kind, the browser session's live site and its pooled users, PostgreSQL, Redis, the
llama.cpp server, the fuzzer), one at a time in the order collected, as a single-process
run does. The other runs every other test beside it. Each half takes about the same time
alone, and each spends much of it waiting on its own servers, so together they take
little more than the longer one. (pytest-xdist's `--dist loadgroup` would do this in one
session, but it silently stopped grouping with pytest 9.2: pytest-xdist issue #1386.)

The second session's output streams; the first's is printed when both are done. The exit
status is the first failing session's (pytest's 5, "no tests collected", counts as
passing when the other session ran tests, as when the arguments name one file).

    .venv/bin/python scripts/run_tests.py [pytest arguments, e.g. tests/browser -x]

Each session takes its own `-m`, so for a marker expression of your own run pytest
itself: `.venv/bin/python -m pytest -m "not browser"`.
"""

import subprocess
import sys
import tempfile

ONE_AT_A_TIME = "one_at_a_time"
NOTHING_COLLECTED = 5


def pytest(marks: str, arguments: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", "-m", marks, *arguments]


def main(arguments: list[str]) -> int:
    with tempfile.TemporaryFile("w+", encoding="utf-8") as log:
        # Its own cache off: two sessions writing .pytest_cache at once would race.
        one = subprocess.Popen(
            pytest(ONE_AT_A_TIME, ["-p", "no:cacheprovider", *arguments]),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            rest = subprocess.call(pytest(f"not {ONE_AT_A_TIME}", arguments))
            first = one.wait()
        finally:
            if one.poll() is None:  # interrupted: stop the other session too
                one.terminate()
                one.wait()
        log.seek(0)
        print(f"\n===== the one-at-a-time session (-m {ONE_AT_A_TIME}) =====\n", flush=True)
        sys.stdout.write(log.read())
    ran = [status for status in (rest, first) if status != NOTHING_COLLECTED]
    if not ran:
        return NOTHING_COLLECTED
    return next((status for status in ran if status != 0), 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
