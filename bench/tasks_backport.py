r"""Option (b) of issue 51, measured: a worker killed mid-task under Django's Tasks backport.

    .venv/bin/pip install --no-deps --target /tmp/dt-site \
        django-tasks==0.12.0 django-tasks-db==0.13.0
    .venv/bin/python bench/tasks_backport.py --site /tmp/dt-site

A throwaway Django project (SQLite in a temporary directory) with the backport's ORM
backend (`django_tasks_db.DatabaseBackend`) enqueues one task standing for a webhook
delivery; the task notes its start and waits, in flight, until released. The first
`db_worker` is SIGKILLed while it runs the task; a second worker then runs for
`--watch` seconds. Printed: what the task recorded (starts and ends) and the task's
row. A delivery mechanism fit for MAGI must run the task again (at least once); the
backport, as measured on 2026-11-25, leaves it RUNNING for ever (its workers take only
READY tasks), so the delivery is lost. Nothing of MAGI is imported: the backport is not
one of MAGI's dependencies (docs/architecture.md, "Background jobs: one lease").
"""

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SETTINGS = """
SECRET_KEY = "bench"
INSTALLED_APPS = ["django_tasks", "django_tasks_db"]
DATABASES = {{"default": {{"ENGINE": "django.db.backends.sqlite3", "NAME": "{db}"}}}}
TASKS = {{"default": {{"BACKEND": "django_tasks_db.DatabaseBackend"}}}}
USE_TZ = True
"""

TASK = """
import time
from pathlib import Path
from django_tasks import task

@task()
def deliver() -> None:
    log = Path("{log}")
    log.write_text(log.read_text() + "start\\n" if log.exists() else "start\\n")
    while not Path("{release}").exists():  # in flight until the bench releases it
        time.sleep(0.05)
    log.write_text(log.read_text() + "done\\n")
"""

ROW = (
    "import django; django.setup();"
    "from django_tasks_db.models import DBTaskResult;"
    "print([(r.status, len(r.worker_ids)) for r in DBTaskResult.objects.all()])"
)


def wait_until(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", required=True, help="where the backport was installed")
    parser.add_argument("--watch", type=float, default=15.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        here = Path(work)
        log, release = here / "task.log", here / "release"
        (here / "bench_settings.py").write_text(SETTINGS.format(db=here / "db.sqlite3"))
        (here / "bench_tasks.py").write_text(TASK.format(log=log, release=release))
        env = {
            **os.environ,
            "PYTHONPATH": f"{args.site}:{here}",
            "DJANGO_SETTINGS_MODULE": "bench_settings",
        }
        django = [sys.executable, "-m", "django"]
        worker = [*django, "db_worker", "--interval", "0.2"]
        subprocess.run([*django, "migrate", "-v0"], env=env, check=True)
        enqueue = (
            "import django; django.setup(); from bench_tasks import deliver; deliver.enqueue()"
        )
        subprocess.run([sys.executable, "-c", enqueue], env=env, check=True)
        first = subprocess.Popen(
            worker, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
        )
        started = wait_until(lambda: log.exists(), 60)
        first.send_signal(signal.SIGKILL)
        first.wait()
        print(f"first worker killed {'mid-task' if started else 'before the task started'}")
        release.touch()
        second = subprocess.Popen(
            worker, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
        )
        ran_again = wait_until(lambda: log.read_text().count("start") > 1, args.watch)
        second.terminate()
        second.wait()
        print(f"the task's own record: {log.read_text().split()}")
        print(f"run again within {args.watch:g} s: {ran_again}")
        row = subprocess.run([sys.executable, "-c", ROW], env=env, check=True, capture_output=True)
        print(f"its row (status, workers that claimed it): {row.stdout.decode().strip()}")


if __name__ == "__main__":
    main()
