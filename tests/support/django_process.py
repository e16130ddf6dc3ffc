"""A live MAGI's management commands run one after another in one long-lived Django
process of its own, as `manage.py COMMAND` runs them one a process: same settings (the
site's environment), same database, same code, without paying Django's start-up for each
(seconds: the app imports the openai SDK). A test that reads or sets the database beside
the server (`manage.py shell -c ...`, `api_token`) does so dozens of times.

The parent (LiveMagi.command) writes one JSON line per command, the argument list, and
reads one back: the command's output, or the error it raised. Between commands the
process closes its database connections, so it holds no transaction or lock while the
server works, and each command reads the database afresh.

    python -m tests.support.django_process     (cwd: the repository; env: the site's)
"""

import contextlib
import io
import json
import os
import sys
import traceback


def run(args: list[str]) -> dict[str, str | bool]:
    from django.core.management import call_command
    from django.db import connections

    out, err = io.StringIO(), io.StringIO()
    try:
        # `shell -c` prints to sys.stdout; other commands write to their own stdout.
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            call_command(*args, stdout=out, stderr=err)
        return {"ok": True, "stdout": out.getvalue(), "stderr": err.getvalue()}
    except BaseException:  # any failure is the command's: reported back, never raised here
        return {"ok": False, "stdout": out.getvalue(), "stderr": traceback.format_exc()}
    finally:
        connections.close_all()


def main() -> None:
    import django

    # The answers go on a copy of stdout: a command's own prints are captured apart.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    sys.stdout = sys.stderr
    django.setup()
    for line in sys.stdin:
        answers.write(json.dumps(run(json.loads(line))) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
