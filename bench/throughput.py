"""Throughput: judgements per second with 1, 2 and 4 engine workers on PostgreSQL and
Redis against a zero-latency endpoint, the engine's CPU per decision against a floor
making the same requests, and where the CPU goes at 4 workers.

    .venv/bin/python bench/throughput.py [--judgements 60] [--workers 1,2,4] [--repeats 2]
    .venv/bin/python bench/throughput.py --profile 4   # and profile a batch of 4 workers

The servers are the suite's own (tests/support/services.py): a throwaway PostgreSQL and
Redis, and `manage.py runworker magi-engine` processes started as the durability tests
start them (with the production sweep interval and lease); every model is the suite's
OpenAI-compatible server (tests/support/llm_server.py) answering at once, in a process of
its own, restarted for each batch (it keeps every request it answered). A judgement has no
saved panel, so it makes the nine votes and no check (docs/contested.md).

A batch: a fresh database, W workers started and idle, N judgements stored in one
transaction and woken on the engine channel as the web page wakes them (one message
each); the batch ends when the last one has finished. Judgements per second is N over the
time from the first wake-up to the last `finished_at`. CPU is read from /proc for every
process of the batch: the workers (the engine), PostgreSQL, Redis and the model server.

The floor: the same nine chat-completion requests per judgement (the bodies the engine
builds, llm/completions.request_body), N judgements at once, round after round, sent
straight with the openai SDK (AsyncOpenAI, one client) from this process; "+ rows" also
stores each answer as one RoundDecision row on the same PostgreSQL through the ORM (the
least an engine that keeps its decisions must do). CPU per decision is the process's CPU
over N x 9.

Batches run in alternating order (1, 2, 4 workers, floor; then the reverse), so a drift
of a shared machine falls on every side; a ratio is the median over the repeats of the
ratio within one repeat.

With --profile W, one more batch runs W workers under cProfile (bench/worker_profile.py:
`manage.py runworker`'s engine with a profiler in every thread, timed by each thread's
CPU clock, so waiting and a busy machine's queue for the CPU count for nothing); their
profiles are summed, by package and by function: where the engine's CPU goes.
"""

import argparse
import asyncio
import functools
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "bench"))

import engine_floor  # noqa: E402
import worker_profile  # noqa: E402

from tests.support import bench_site  # noqa: E402

# The models the suite's servers expect (tests/support/services.MODELS), and the agents
# as services.create_judgement stores them: (name, criteria, model).
MODELS = ("model-a", "model-b", "model-c")
BRIEFS = [
    (name, f"{name} approves only safe plans.", model)
    for name, model in zip(("Melchior", "Balthasar", "Casper"), MODELS, strict=True)
]
CONTENT = "I am going to travel to Japan next week."
VOTES_PER_JUDGEMENT = 9


class Bench:
    """The servers of one run, and the batches run against them."""

    def __init__(self, args: argparse.Namespace, var_dir: Path) -> None:
        from tests.support import services

        self.services = services
        self.args = args
        self.var_dir = var_dir
        self.llm: subprocess.Popen | None = None
        self.llm_url = ""
        self.numbers = iter(range(1, 10_000))
        self.postgres = services.Postgres()
        self.redis = services.Redis()

    def start(self) -> None:
        self.postgres.init()
        self.redis.start()
        self.postgres.admin("CREATE DATABASE bench_template")
        env = self.services.base_env(self.postgres.url("bench_template"), "")
        migrate = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput"],
            cwd=ROOT, env=env, capture_output=True, text=True,
        )  # fmt: skip
        assert migrate.returncode == 0, migrate.stderr

    def close(self) -> None:
        self.stop_llm()
        self.redis.stop()
        shutil.rmtree(self.redis.dir, ignore_errors=True)  # stop() leaves its log behind
        self.postgres.destroy()

    # --- the pieces of a batch -------------------------------------------------------

    def fresh_llm(self) -> None:
        self.stop_llm()
        self.llm = bench_site.start_llm_server(MODELS)
        assert self.llm.stdout is not None
        self.llm_url = self.llm.stdout.readline().strip()

    def stop_llm(self) -> None:
        if self.llm is not None:
            self.llm.terminate()
            self.llm.wait()
            self.llm = None

    def fresh_database(self) -> str:
        """A migrated database of its own, reachable here as services.ALIAS."""
        import dj_database_url
        from django.db import connections

        name = f"bench_{next(self.numbers)}"
        self.postgres.admin(f"CREATE DATABASE {name} TEMPLATE bench_template")
        url = self.postgres.url(name)
        alias = self.services.ALIAS
        if alias in connections.settings:
            forget_connection(alias)
        configured = connections.configure_settings(
            {"default": connections.settings["default"], alias: dj_database_url.parse(url)}
        )
        connections.settings[alias] = configured[alias]
        return url

    def store(self, count: int) -> list[int]:
        """`count` queued judgements of three agents, in one transaction."""
        from django.db import transaction

        with transaction.atomic(using=self.services.ALIAS):
            return [self.services.create_judgement().pk for _ in range(count)]

    def side_pids(self) -> dict[str, list[int]]:
        assert self.llm is not None and self.redis.process is not None
        return {
            "postgres": bench_site.postgres_pids(self.postgres.data),
            "redis": [self.redis.process.pid],
            "model server": [self.llm.pid],
        }

    # --- the engine ------------------------------------------------------------------

    def engine_batch(self, workers: int, profile: bool = False) -> dict[str, Any]:
        count = self.args.judgements
        self.fresh_llm()
        url = self.fresh_database()
        log_dir = self.var_dir / f"batch-{workers}-{time.monotonic_ns()}"
        log_dir.mkdir()
        processes = self.services.Processes(url, self.redis.url, self.llm_url, log_dir)
        try:
            start = worker_profile.start if profile else start_worker
            started = [start(processes, f"worker-{n}", log_dir) for n in range(workers)]
            ids = self.store(count)
            pids = {"engine": [p.pid for p in started], **self.side_pids()}
            before = {side: bench_site.cpu_seconds(each) for side, each in pids.items()}
            began = time.time()
            wake_all(self.redis.url, ids)
            self.wait_finished(ids)
            after = {side: bench_site.cpu_seconds(each) for side, each in pids.items()}
            for process in started if profile else []:
                process.kill(signal.SIGINT)  # the profiled worker writes its profile
        finally:
            processes.stop_all()
        wall = self.last_finished(ids) - began
        cpu = {side: after[side] - before[side] for side in pids}
        return {"wall": wall, "cpu": cpu, "log_dir": log_dir, **self.outcome(ids)}

    def wait_finished(self, ids: list[int]) -> None:
        from judgements.models import Judgement

        alias = self.services.ALIAS
        waiting = Judgement.objects.using(alias).filter(pk__in=ids, finished_at__isnull=True)
        self.services.wait_for(lambda: not waiting.exists(), self.args.timeout, "every judgement")

    def last_finished(self, ids: list[int]) -> float:
        from django.db.models import Max

        from judgements.models import Judgement

        rows = Judgement.objects.using(self.services.ALIAS).filter(pk__in=ids)
        return rows.aggregate(last=Max("finished_at"))["last"].timestamp()

    def outcome(self, ids: list[int]) -> dict[str, Any]:
        """Statuses, and calls asked more than once (a retry is work the floor does not
        do, so it is counted and shown)."""
        from django.db.models import Count

        from judgements.models import AttemptOutcome, Judgement, LLMAttempt, RoundDecision

        alias = self.services.ALIAS
        statuses = dict(
            Judgement.objects.using(alias)
            .filter(pk__in=ids)
            .values_list("status")
            .annotate(n=Count("id"))
        )
        decisions = RoundDecision.objects.using(alias).filter(agent__judgement_id__in=ids).count()
        retried = (
            LLMAttempt.objects.using(alias)
            .filter(agent__judgement_id__in=ids)
            .exclude(outcome=AttemptOutcome.OK)
            .count()
        )
        return {"statuses": statuses, "decisions": decisions, "retried": retried}

    # --- the floor -------------------------------------------------------------------

    def floor_batch(self, rows: bool) -> dict[str, Any]:
        import openai
        from asgiref.sync import sync_to_async

        count = self.args.judgements
        self.fresh_llm()
        self.fresh_database()
        panels = engine_floor.panels_of(self.store(count), self.services.ALIAS)
        bodies = engine_floor.vote_bodies(BRIEFS, CONTENT)
        pids = self.side_pids()
        before = {side: bench_site.cpu_seconds(each) for side, each in pids.items()}

        async def run() -> None:
            async with openai.AsyncOpenAI(
                base_url=self.llm_url, api_key="bench", max_retries=0, timeout=self.args.timeout
            ) as client:
                await engine_floor.run(
                    client, bodies, panels, rows_in=self.services.ALIAS if rows else None
                )
            # The ORM's writes ran on asgiref's one long-lived thread: its connection is to
            # this batch's database, which the next batch replaces.
            await sync_to_async(forget_connection)(self.services.ALIAS)

        began_cpu, began = time.process_time(), time.time()
        asyncio.run(run())
        wall, own = time.time() - began, time.process_time() - began_cpu
        after = {side: bench_site.cpu_seconds(each) for side, each in pids.items()}
        cpu = {"engine": own, **{side: after[side] - before[side] for side in pids}}
        return {"wall": wall, "cpu": cpu}


def forget_connection(alias: str) -> None:
    """Close this thread's connection to `alias` and forget it: the next use connects to
    what the settings say then."""
    from django.db import connections

    for connection in connections.all(initialized_only=True):
        if connection.alias == alias:
            connection.close()
            del connections[alias]


def start_worker(processes: Any, name: str, log_dir: Path) -> Any:
    """`manage.py runworker magi-engine`, started and listening."""
    return processes.worker(name, **worker_profile.WORKER_ENV)


def wake_all(redis_url: str, ids: list[int]) -> None:
    """What the web page does after storing each judgement: one wake-up on the engine
    channel (tests/support/services.wake, for many at once)."""
    from channels_redis.core import RedisChannelLayer

    from judgements.models.magi_settings import magi_settings

    async def send() -> None:
        layer = RedisChannelLayer(hosts=[redis_url])
        for judgement_id in ids:
            message = {"type": "judgement.run", "judgement_id": judgement_id}
            await layer.send(magi_settings.MAGI_ENGINE_CHANNEL, message)
        await layer.close_pools()

    asyncio.run(send())


# --- reporting -------------------------------------------------------------------------


def report(args: argparse.Namespace, batches: dict[str, list[dict[str, Any]]]) -> None:
    n = args.judgements
    decisions = n * VOTES_PER_JUDGEMENT
    print(f"\n{n} judgements a batch ({decisions} vote decisions), {args.repeats} repeats")
    print("side            jps (each repeat)         CPU ms per decision (median): engine"
          " / postgres / redis / model server")  # fmt: skip
    for side, runs in batches.items():
        rates = [n / run["wall"] for run in runs]
        per = {
            part: 1000 * statistics.median(run["cpu"][part] for run in runs) / decisions
            for part in runs[0]["cpu"]
        }
        label = f"{statistics.median(rates):6.2f} ({', '.join(f'{r:.2f}' for r in rates)})"
        print(f"  {side:14}{label:28}" + " / ".join(f"{v:.2f}" for v in per.values()))

    def ratio(value: Any, a: str, b: str) -> float:
        pairs = zip(batches[a], batches[b], strict=True)
        return statistics.median(value(x) / value(y) for x, y in pairs)

    def rate(run: dict[str, Any]) -> float:
        return 1 / run["wall"]

    def engine_cpu(run: dict[str, Any]) -> float:
        return run["cpu"]["engine"]

    print("ratios (median over repeats of the ratio within a repeat):")
    for workers in args.workers[1:]:
        got = ratio(rate, f"{workers} workers", f"{args.workers[0]} workers")
        print(f"  jps {workers} workers / {args.workers[0]}: {got:.2f}x")
    for workers in args.workers:
        for floor_side in ("floor", "floor + rows"):
            got = ratio(engine_cpu, f"{workers} workers", floor_side)
            print(f"  engine CPU per decision, {workers} workers / {floor_side}: {got:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgements", type=int, default=60, help="judgements per batch")
    parser.add_argument("--workers", default="1,2,4", help="worker counts, comma-separated")
    parser.add_argument("--repeats", type=int, default=2, help="batches of each side")
    parser.add_argument("--profile", type=int, metavar="W", help="profile a batch of W workers")
    parser.add_argument("--top", type=int, default=25, help="functions listed per profile")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a batch may take")
    parser.add_argument("--logs", help="keep the processes' logs in this directory")
    args = parser.parse_args()
    args.workers = [int(w) for w in args.workers.split(",")]

    # Stopped from outside: still stop the servers (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    with tempfile.TemporaryDirectory(prefix="magi-throughput-") as var_name:
        var_dir = Path(args.logs or var_name)
        var_dir.mkdir(parents=True, exist_ok=True)
        # The model server's address changes with every batch: each batch sets it.
        bench_site.setup_django("http://127.0.0.1:9/v1", str(var_dir), MODELS, migrate=False)
        bench = Bench(args, var_dir)
        try:
            bench.start()
            run(bench, args)
        finally:
            bench.close()


def run(bench: Bench, args: argparse.Namespace) -> None:
    print(f"load average at start: {os.getloadavg()}", flush=True)
    bench.floor_batch(rows=True)  # warm-up: this process's imports and connections
    sides: dict[str, Callable[[], dict[str, Any]]] = {
        f"{w} workers": functools.partial(bench.engine_batch, w) for w in args.workers
    }
    sides["floor"] = functools.partial(bench.floor_batch, rows=False)
    sides["floor + rows"] = functools.partial(bench.floor_batch, rows=True)
    batches: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    order = list(sides)
    for repeat in range(args.repeats):
        for side in order if repeat % 2 == 0 else reversed(order):
            result = sides[side]()
            batches[side].append(result)
            extra = {k: result[k] for k in ("statuses", "decisions", "retried") if k in result}
            cpu = ", ".join(f"{k} {v:.2f}" for k, v in result["cpu"].items())
            print(f"  {side}: {result['wall']:.2f} s wall; CPU s: {cpu} {extra}", flush=True)
    print(f"load average at end: {os.getloadavg()}")
    report(args, batches)
    if args.profile:
        result = bench.engine_batch(args.profile, profile=True)
        print(f"\nprofiled batch of {args.profile} workers: {result['wall']:.2f} s wall")
        worker_profile.summarise(sorted(result["log_dir"].glob("*.prof")), args.top)


if __name__ == "__main__":
    main()
