"""The engine's CPU, profiled where it runs (bench/throughput.py --profile W): a worker
that runs what `manage.py runworker magi-engine` runs, with a profiler in every thread
timed by that thread's CPU clock (waiting, and a busy machine's queue for the CPU, count
for nothing), and the workers' profiles summed by package and by function.

    .venv/bin/python bench/worker_profile.py PATH   # a worker, its profile in PATH.prof

(bench/throughput.py starts these itself.)
"""

import asyncio
import collections
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# The engine as deployed, not as the durability tests speed it up: a sweep every 10 s
# and 30 s leases (renewals come with wall time, not with decisions).
WORKER_ENV = {"MAGI_SWEEP_INTERVAL": "10", "MAGI_LEASE_SECONDS": "30", "LOG_LEVEL": "INFO"}


def start(processes: Any, name: str, log_dir: Path) -> Any:
    """`manage.py runworker magi-engine`'s engine under cProfile (this script, `run`),
    started and listening, as tests/support/services.Processes starts a worker."""
    from tests.support import services

    env = {**processes.env, **WORKER_ENV}
    command = [sys.executable, str(Path(__file__)), str(log_dir / name)]
    process = services.Process(name, command, env, log_dir)
    processes.started.append(process)
    services.wait_for(
        lambda: "engine worker" in process.log() or process.popen.poll() is not None,
        60,
        f"{name} to start",
    )
    assert process.popen.poll() is None, process.log()
    return process


def run(path: str) -> None:
    """What `manage.py runworker magi-engine` runs, with a profiler in every thread (each
    thread's CPU clock), until SIGINT; then every thread's profile in `path`.prof."""
    import cProfile
    import threading

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "magi_site.settings")  # as manage.py
    django.setup()  # logging as configured: "engine worker ... listening" says it is up
    from judgements.engine.runner import EngineRunner

    main = cProfile.Profile(time.thread_time)
    threads: list[tuple[threading.Thread, cProfile.Profile]] = []

    def profile_this_thread(*_: Any) -> None:
        # A new thread's first event: from here on cProfile's own hook replaces this one.
        profile = cProfile.Profile(time.thread_time)
        threads.append((threading.current_thread(), profile))
        profile.enable()

    threading.setprofile(profile_this_thread)
    main.enable()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(EngineRunner().run_forever())
    main.disable()
    # A profile is read right only once its thread has ended: a frame still open when it
    # is read (a thread's wait for work) is timed against the reading thread's clock. The
    # engine's database threads end here; asyncio.run ended the loop's own.
    from asgiref.sync import SyncToAsync

    from judgements.infrastructure.database import db_executor

    db_executor().shutdown(wait=True)
    SyncToAsync.single_thread_executor.shutdown(wait=True)
    import pstats

    merged = pstats.Stats(main)
    for thread, profile in threads:
        thread.join(timeout=5)
        if thread.is_alive():
            print(f"left out: the profile of {thread.name}, still running", flush=True)
        else:
            merged.add(profile)
    merged.dump_stats(f"{path}.prof")


def summarise(paths: list[Path], top: int) -> None:
    """The workers' profiles summed: own CPU time by the package a function lives in, and
    the functions with the most, inclusive and own."""
    import pstats

    if not paths:
        print("  (no profile written)")
        return
    stats = pstats.Stats(*map(str, paths))
    rows = stats.stats  # type: ignore[attr-defined]  # pstats keeps its table here
    total = sum(own for _, _, own, _, _ in rows.values())
    by_package: collections.Counter[str] = collections.Counter()
    for (filename, _, _), (_, _, own, _, _) in rows.items():
        by_package[package_of(filename)] += own
    print(f"\nwhere the workers' CPU goes ({total:.2f} s CPU in all threads of every worker):")
    print("  own time by package:")
    for name, own in by_package.most_common(16):
        print(f"    {100 * own / total:5.1f}%  {name}")

    def name_of(key: tuple[str, int, str]) -> str:
        filename, line, function = key
        return f"{function} ({package_of(filename)}:{line})"

    for title, column in (("inclusive", 3), ("own", 2)):
        print(f"  functions, {title} (top {top}):")
        ranked = sorted(rows.items(), key=lambda item: item[1][column], reverse=True)
        for key, row in ranked[:top]:
            print(f"    {100 * row[column] / total:5.1f}%  {name_of(key)}")


def package_of(filename: str) -> str:
    """A profiled function's file -> a short name of where the code lives."""
    if filename == "~":
        return "built-in functions (C)"
    if "site-packages/" in filename:
        return filename.split("site-packages/", 1)[1].split("/", 1)[0].removesuffix(".py")
    if filename.startswith(str(ROOT)):
        parts = Path(filename).relative_to(ROOT).parts
        return "/".join(parts[:2]) if parts[0] == "judgements" else parts[0]
    if "/lib/python3" in filename:
        module = filename.split("/lib/python3", 1)[1].split("/", 2)[-1]
        return "stdlib " + module.split("/", 1)[0].removesuffix(".py")
    return filename


if __name__ == "__main__":
    run(sys.argv[1])
