"""Engine CPU: this process's CPU seconds per decision, the engine against a floor.

    .venv/bin/python bench/engine_cpu.py [--judgements 100] [--pairs 4]
    .venv/bin/python bench/engine_cpu.py --profile engine.pstats --judgements 20

(a) The engine runs N judgements at once (3 agents x 3 rounds = 9 vote decisions each)
through the real runner (EngineRunner.run_judgement), on a zero-latency endpoint.
(b) The floor: the bare openai SDK (AsyncOpenAI.chat.completions.create, the request
shape the engine sends, log-probabilities and JSON schema included) making the same
calls to the same server, N judgements at once, round after round, writing one row per
decision with the ORM (RoundDecision; JudgementCheck for a check's call).

The LLM server (tests/support/llm_server.py) runs in a process of its own, so its CPU is not
counted; the SQLite database lives in a temporary directory. Configurations run in
alternating batches (ABBA order, so a drift of the machine falls on both sides alike);
a ratio is the median over batch pairs.

The checks beside round 1 (a probe per agent, a second opinion, a screen: five calls a
judgement) run where they can inform the verdict (docs/contested.md, "When a check
runs"): a certified panel's judgements and evaluation runs ask them, so the engine is
measured with all five ("engine default") and without ("engine no checks").
Ratios reported:
- per vote decision, checks as by default: engine default CPU / 9 vote decisions,
  against the floor's 9 calls and rows per judgement;
- per call, checks counted as decisions: engine default CPU / 14 calls, against a floor
  that also makes the five check calls (14 calls and rows per judgement);
- without checks: engine no checks / 9, against the 9-call floor. This is the one the
  issue's 1.44x matches (it rose from 1.11x as the checks arrived, far less than adding
  five calls a judgement would have): judgements made straight as rows ask no checks.

`--floor sdk` (the default) asks as a plain program would: one client, the typed
`chat.completions.create`; `--floor engine-path` asks as the engine does (bench/
engine_floor.py EnginePath; docs/benchmarks.md says why the default is no true floor).

The suite's server is restarted before each batch (it keeps every request it answered
and slows as they pile up); leases and call timeouts are set long, so neither renewals
nor retries, which come with wall time on a busy machine, are counted as engine work.
"""

import argparse
import asyncio
import cProfile
import gc
import pstats
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import engine_floor  # noqa: E402

from tests.support import bench_site  # noqa: E402

MODELS = ("bench-a", "bench-b", "bench-c")
CONTENT = "I am going to travel to Japan next week."
# The agents as new_judgements makes them: (name, criteria, model).
BRIEFS = [(f"agent-{i}", "Approve safe plans.", model) for i, model in enumerate(MODELS)]
VOTES_PER_JUDGEMENT = 9
CHECKS_PER_JUDGEMENT = 5  # a probe per agent, a second opinion, a screen
# Seconds a call may take, on both sides: a burst of hundreds of calls keeps the suite's
# server (pure Python) busy for many seconds on a loaded machine, and a call timed out
# and asked again would be work that is not like for like.
TIMEOUT = 600.0


def start_llm_server() -> subprocess.Popen:
    """The test server in a process of its own: its CPU is not this process's."""
    return bench_site.start_llm_server(MODELS)


def setup_django(base_url: str, var_dir: str) -> None:
    bench_site.setup_django(
        base_url,
        var_dir,
        MODELS,
        MAGI_LLM_TIMEOUT=str(TIMEOUT),
        # Renewals come with wall time, not with decisions: a loaded machine would
        # charge the engine for its slowness. Leases here outlast any batch.
        MAGI_LEASE_SECONDS=str(TIMEOUT),
    )


def set_checks(on: bool) -> None:
    from django.conf import settings

    settings.MAGI_CONFIDENCE_PROBE = on
    settings.MAGI_SECOND_OPINION = on
    settings.MAGI_INJECTION_SCREEN = on


def new_judgements(count: int, *, checks: bool) -> list[int]:
    """Queued judgements, started the one way judgements start (intake/start.py), with
    the checks the page and the API give them by default (or none)."""
    from judgements.intake.schemas import Case, validated
    from judgements.intake.start import Submission, submit

    set_checks(checks)
    case = {
        "title": "bench",
        "content": CONTENT,
        "agents": [
            {"name": name, "model": model, "criteria": criteria} for name, criteria, model in BRIEFS
        ],
    }
    return [
        judgement.pk
        for judgement in submit([validated(Case, case)] * count, Submission()).judgements
    ]


# --- (a) the engine ------------------------------------------------------------------


async def engine_batch(ids: list[int]) -> None:
    from judgements.engine.runner import EngineRunner

    runner = EngineRunner(worker_id="bench")
    done = await asyncio.gather(*(runner.run_judgement(pk) for pk in ids))
    assert all(done)


# --- measuring -----------------------------------------------------------------------


def cpu_of(
    run: Callable[[], Coroutine[Any, Any, None]], profile: cProfile.Profile | None = None
) -> float:
    """CPU seconds of this process (every thread: the engine's database thread too) to
    run `run` to its end on a fresh event loop."""
    gc.collect()
    began = time.process_time()
    if profile is not None:
        profile.enable()
    asyncio.run(run())
    if profile is not None:
        profile.disable()
    return time.process_time() - began


class Sides:
    """The configurations, each a function of a batch size returning CPU seconds, and
    the LLM server they call."""

    def __init__(self, floor: str = "sdk") -> None:
        self.server: subprocess.Popen | None = None
        self.bodies: dict = {}
        self.floor_path = floor
        self.base_url = self.fresh_server()

    def fresh_server(self) -> str:
        """A new server process for each batch: the suite's server records every request
        it answers, and over thousands of them it slowed until the batches waited on it
        for minutes. Outside the measured CPU, as is everything before a batch runs."""
        self.stop_server()
        self.server = start_llm_server()
        assert self.server.stdout is not None
        self.base_url = self.server.stdout.readline().strip()
        if self.bodies:  # Django is set up: point its providers at the new server
            from django.conf import settings

            for provider in settings.MAGI_PROVIDERS.values():
                provider["base_url"] = self.base_url
        return self.base_url

    def stop_server(self) -> None:
        if self.server is not None:
            self.server.terminate()
            self.server.wait()
            self.server = None

    def engine(self, n: int, checks: bool, profile: cProfile.Profile | None = None) -> float:
        ids = new_judgements(n, checks=checks)
        self.fresh_server()

        async def run() -> None:
            await engine_batch(ids)

        cpu = cpu_of(run, profile)
        self.assert_finished(ids)
        return cpu

    def floor(self, n: int, checks: bool, profile: cProfile.Profile | None = None) -> float:

        ids = new_judgements(n, checks=False)
        panels = engine_floor.panels_of(ids)
        self.fresh_server()

        async def run() -> None:
            # Clients of its own per batch, as the engine's runner has.
            async with engine_floor.asking(
                self.floor_path,
                base_url=self.base_url, api_key="bench", max_retries=0, timeout=TIMEOUT,
            ) as client:  # fmt: skip
                await engine_floor.run(
                    client, self.bodies, panels, rows_in="default", checks=checks
                )

        return cpu_of(run, profile)

    @staticmethod
    def assert_finished(ids: list[int]) -> None:
        """Every judgement approved, with no failed or repeated call: a retry would be
        extra work the floor does not do."""
        from judgements.models import AttemptOutcome, Judgement, JudgementCheck, LLMAttempt, Status

        statuses = set(Judgement.objects.filter(pk__in=ids).values_list("status", flat=True))
        assert statuses == {Status.APPROVED}, statuses
        attempts = LLMAttempt.objects.filter(agent__judgement_id__in=ids)
        checks = JudgementCheck.objects.filter(judgement_id__in=ids)
        extra = (
            attempts.exclude(outcome=AttemptOutcome.OK).count() + checks.exclude(error="").count()
        )
        if extra:
            print(f"  (engine batch: {extra} failed or rechecked attempts)", flush=True)


def count_queries(sides: Sides, n: int, checks: bool) -> tuple[int, dict[str, int]]:
    """SQL statements the engine runs for n judgements, by their first word."""
    from django.db import connections

    seen: list[str] = []

    def note(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        seen.append(sql)
        return execute(sql, params, many, context)

    # The engine's queries run on its database thread, each thread with a connection of
    # its own: wrap every connection a thread opens while the batch runs.
    from django.db.backends.signals import connection_created

    def wrap(sender: Any, connection: Any, **kwargs: Any) -> None:
        connection.execute_wrappers.append(note)

    connection_created.connect(wrap)
    connections.close_all()
    from judgements.infrastructure.database import db_executor

    db_executor().submit(connections.close_all).result()
    try:
        sides.engine(n, checks)
    finally:
        connection_created.disconnect(wrap)
        db_executor().submit(connections.close_all).result()
        connections.close_all()
    kinds: dict[str, int] = {}
    for sql in seen:
        word = sql.split(None, 1)[0].upper()
        kinds[word] = kinds.get(word, 0) + 1
    return len(seen), kinds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgements", type=int, default=100, help="judgements per batch")
    parser.add_argument("--pairs", type=int, default=4, help="alternating batch pairs")
    parser.add_argument(
        "--floor",
        choices=("sdk", "engine-path"),
        default="sdk",
        help="how the floor asks: the typed SDK call, one pool; or as the engine asks",
    )
    parser.add_argument("--profile", help="profile one engine batch (checks as by default)")
    parser.add_argument("--no-checks-profile", action="store_true", help="profile without")
    parser.add_argument(
        "--no-checks-only", action="store_true", help="only the engine without checks and its floor"
    )
    parser.add_argument(
        "--profile-floor", action="store_true", help="profile the floor's event loop instead"
    )
    args = parser.parse_args()

    # Stopped from outside: still stop the server (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    sides = Sides(args.floor)
    try:
        with tempfile.TemporaryDirectory() as var_dir:
            setup_django(sides.base_url, var_dir)
            sides.bodies = {
                **engine_floor.vote_bodies(BRIEFS, CONTENT),
                **engine_floor.check_bodies(BRIEFS, CONTENT),
            }
            if args.profile:
                profile_one(sides, args)
            else:
                measure(sides, args)
    finally:
        sides.stop_server()


def profile_one(sides: Sides, args: argparse.Namespace) -> None:
    checks = not args.no_checks_profile
    n = args.judgements
    if args.profile_floor:
        sides.floor(5, checks)  # warm up: imports, connections
        profile = cProfile.Profile(time.thread_time)
        cpu = sides.floor(n, checks, profile)
        print(f"profiled floor batch: {cpu:.2f} s CPU for {n} judgements (checks {checks})")
        profile.dump_stats(args.profile)
        stats = pstats.Stats(args.profile)
        stats.sort_stats("cumulative").print_stats(70)
        return
    sides.engine(5, checks)  # warm up: imports, connections
    total, kinds = count_queries(sides, n, checks)
    calls = VOTES_PER_JUDGEMENT + (CHECKS_PER_JUDGEMENT if checks else 0)
    print(
        f"queries: {total / (n * VOTES_PER_JUDGEMENT):.1f} per vote decision, "
        f"{total / (n * calls):.1f} per call, {total / n:.1f} per judgement: {kinds}"
    )
    # CPU time, not wall time, per thread: the event loop's and the database thread's
    # (where the engine's ORM code runs) each get a profile of their own.
    from judgements.infrastructure.database import db_executor

    loop_profile = cProfile.Profile(time.thread_time)
    db_profile = cProfile.Profile(time.thread_time)
    db_executor().submit(db_profile.enable).result()
    cpu = sides.engine(n, checks, loop_profile)
    db_executor().submit(db_profile.disable).result()
    print(f"profiled batch: {cpu:.2f} s CPU for {n} judgements (checks {checks})")
    for name, profile in (("event loop", loop_profile), ("database thread", db_profile)):
        path = f"{args.profile}.{name.split()[0]}"
        profile.dump_stats(path)
        print(f"\n===== {name} thread: {path}")
        stats = pstats.Stats(path)
        stats.sort_stats("cumulative").print_stats(70)
        stats.sort_stats("tottime").print_stats(40)


def measure(sides: Sides, args: argparse.Namespace) -> None:
    n = args.judgements
    # Warm-up: first imports, connections and caches are not what we measure.
    sides.engine(5, True)
    sides.engine(5, False)
    sides.floor(5, True)
    sides.floor(5, False)

    configs = {
        "engine default": lambda: sides.engine(n, True),
        "engine no checks": lambda: sides.engine(n, False),
        "floor 9 calls": lambda: sides.floor(n, False),
        "floor 14 calls": lambda: sides.floor(n, True),
    }
    if args.no_checks_only:
        del configs["engine default"], configs["floor 14 calls"]
    cpu: dict[str, list[float]] = {name: [] for name in configs}
    order = list(configs)
    for pair in range(args.pairs):
        for name in order if pair % 2 == 0 else reversed(order):
            cpu[name].append(configs[name]())
        print(
            f"pair {pair + 1}: "
            + ", ".join(f"{name} {values[-1]:.2f} s" for name, values in cpu.items()),
            flush=True,
        )

    votes = n * VOTES_PER_JUDGEMENT
    every_call = n * (VOTES_PER_JUDGEMENT + CHECKS_PER_JUDGEMENT)
    print(f"\n{n} judgements a batch, {args.pairs} batches of each ({args.floor}); ms CPU:")
    for name, values in cpu.items():
        line = f"  {name:17} {1000 * statistics.median(values) / votes:6.2f} per vote decision"
        if name in ("engine default", "floor 14 calls"):
            line += f", {1000 * statistics.median(values) / every_call:6.2f} per call"
        print(line)

    def ratio(a: str, b: str, a_per: int, b_per: int) -> float:
        return statistics.median(
            (x / a_per) / (y / b_per) for x, y in zip(cpu[a], cpu[b], strict=True)
        )

    print("ratios (median over batch pairs):")
    if not args.no_checks_only:
        print(
            f"  per vote decision, checks as by default:               "
            f"{ratio('engine default', 'floor 9 calls', votes, votes):.2f}x"
        )
        print(
            f"  per call, checks counted as decisions:                 "
            f"{ratio('engine default', 'floor 14 calls', every_call, every_call):.2f}x"
        )
    print(
        f"  per vote decision, checks off (the issue's 1.44x):     "
        f"{ratio('engine no checks', 'floor 9 calls', votes, votes):.2f}x"
    )


if __name__ == "__main__":
    main()
