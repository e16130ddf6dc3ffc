"""Engine CPU: this process's CPU seconds per decision, the engine against a floor.

    .venv/bin/python bench/engine_cpu.py [--judgements 100] [--pairs 4]
    .venv/bin/python bench/engine_cpu.py --modes off --rows sql  # issue 71's floor
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

Which checks run beside round 1 (docs/contested.md, "When a check runs") decides how many
calls a judgement makes, so the engine is measured three ways, each against a floor that
makes the same calls (`--modes`):
- "default": what a deployment that sets nothing runs, a panel with no certificate: the
  second opinion alone (10 calls a judgement). The engine decides, as in production
  (no setting is set); the batch fails if any other check ran;
- "all": every check (a probe per agent, a second opinion, a screen: 14 calls), as an
  evaluation run, a deployment that turns them on, or a certificate that reads them asks;
- "off": none (9 calls), as judgements made straight as rows ask.
Ratios reported, each the median over batch pairs:
- per vote decision: the engine's CPU over its 9 vote decisions, against the 9-call
  floor. The issue's measure; with checks, the checks' calls count on the engine's side
  only (the bare SDK making 14 calls is itself about 1.5x the 9-call floor);
- per call: the engine's CPU over every call it makes, against a floor that makes the
  same calls and stores a row for each. What the engine adds beyond its calls.

`--rows orm` (the default) stores each of the floor's votes through the ORM's `acreate`,
as a Django program would; `--rows sql` as one INSERT on the standard library's sqlite3
in the event loop's thread, as issue 71 measures its floor ("the bare SDK call plus one
SQLite insert per decision"): no model instance, no thread hop, so a lower floor and a
higher ratio (docs/benchmarks.md).

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
import functools
import gc
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
# The checks each mode's judgements ask (engine_floor.run's kinds) and their calls.
MODES = {
    "default": ("second_opinion",),
    "all": ("probe", "second_opinion", "screen"),
    "off": (),
}
# The deployment's switch for each mode: None is a deployment that sets nothing.
SWITCHES = {"default": None, "all": True, "off": False}


def calls_of(mode: str) -> int:
    """The calls a judgement of `mode` makes: its votes, a probe per agent, the others."""
    return VOTES_PER_JUDGEMENT + sum(len(BRIEFS) if k == "probe" else 1 for k in MODES[mode])


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


def set_checks(mode: str) -> None:
    from judgements.models.magi_settings import magi_settings

    magi_settings.MAGI_CONFIDENCE_PROBE = SWITCHES[mode]
    magi_settings.MAGI_SECOND_OPINION = SWITCHES[mode]
    magi_settings.MAGI_INJECTION_SCREEN = SWITCHES[mode]


def new_judgements(count: int, *, mode: str) -> list[int]:
    """Queued judgements, started the one way judgements start (intake/start.py), under
    the deployment's check switches of `mode`."""
    from judgements.intake.schemas import CaseJson, validated
    from judgements.intake.start import Submission, submit

    set_checks(mode)
    case = {
        "title": "bench",
        "content": CONTENT,
        "agents": [
            {"name": name, "model": model, "criteria": criteria} for name, criteria, model in BRIEFS
        ],
    }
    return [
        judgement.pk
        for judgement in submit([validated(CaseJson, case).case()] * count, Submission()).judgements
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

    def __init__(self, floor: str = "sdk", rows: str = "orm") -> None:
        self.server: subprocess.Popen | None = None
        self.bodies: dict = {}
        self.floor_path = floor
        self.raw_sql = rows == "sql"
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
            from judgements.models.magi_settings import magi_settings

            for provider in magi_settings.MAGI_PROVIDERS.values():
                provider["base_url"] = self.base_url
        return self.base_url

    def stop_server(self) -> None:
        if self.server is not None:
            self.server.terminate()
            self.server.wait()
            self.server = None

    def engine(self, n: int, mode: str, profile: cProfile.Profile | None = None) -> float:
        ids = new_judgements(n, mode=mode)
        self.fresh_server()

        async def run() -> None:
            await engine_batch(ids)

        cpu = cpu_of(run, profile)
        self.assert_finished(ids, mode)
        return cpu

    def floor(self, n: int, mode: str, profile: cProfile.Profile | None = None) -> float:

        ids = new_judgements(n, mode="off")
        panels = engine_floor.panels_of(ids)
        self.fresh_server()

        async def run() -> None:
            # Clients of its own per batch, as the engine's runner has.
            async with engine_floor.asking(
                self.floor_path,
                base_url=self.base_url, api_key="bench", max_retries=0, timeout=TIMEOUT,
            ) as client:  # fmt: skip
                await engine_floor.run(
                    client, self.bodies, panels, rows_in="default", checks=MODES[mode],
                    raw_sql=self.raw_sql,
                )  # fmt: skip

        cpu = cpu_of(run, profile)
        from judgements.models import RoundDecision

        stored = RoundDecision.objects.filter(agent__judgement_id__in=ids).count()
        assert stored == n * VOTES_PER_JUDGEMENT, f"the floor stored {stored} votes"
        return cpu

    @staticmethod
    def assert_finished(ids: list[int], mode: str) -> None:
        """Every judgement approved, having asked the checks of `mode` and no other, with
        no failed or repeated call: a retry would be extra work the floor does not do."""
        from judgements.models import AttemptOutcome, Judgement, JudgementCheck, LLMAttempt, Status

        statuses = set(Judgement.objects.filter(pk__in=ids).values_list("status", flat=True))
        assert statuses == {Status.APPROVED}, statuses
        attempts = LLMAttempt.objects.filter(agent__judgement_id__in=ids)
        checks = JudgementCheck.objects.filter(judgement_id__in=ids)
        kinds = set(checks.values_list("kind", flat=True))
        assert kinds == set(MODES[mode]), (mode, kinds)
        assert checks.count() == len(ids) * (calls_of(mode) - VOTES_PER_JUDGEMENT), mode
        extra = (
            attempts.exclude(outcome=AttemptOutcome.OK).count() + checks.exclude(error="").count()
        )
        if extra:
            print(f"  (engine batch: {extra} failed or rechecked attempts)", flush=True)


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
    parser.add_argument(
        "--rows",
        choices=("orm", "sql"),
        default="orm",
        help="how the floor stores a vote: the ORM's acreate (a thread hop, as Django's async"
        " ORM makes it), or one INSERT on the standard library's sqlite3 (--modes off only)",
    )
    parser.add_argument(
        "--modes",
        default="default,all,off",
        help="which checks run, comma-separated: default (what a deployment that sets "
        "nothing runs), all, off",
    )
    parser.add_argument("--profile", help="profile one engine batch (of the first mode)")
    parser.add_argument(
        "--profile-floor", action="store_true", help="profile the floor's event loop instead"
    )
    args = parser.parse_args()
    args.modes = args.modes.split(",")
    if not args.modes or not set(args.modes) <= set(MODES):
        parser.error(f"--modes: of {', '.join(MODES)}, comma-separated")
    if args.rows == "sql" and args.modes != ["off"]:
        parser.error("--rows sql stores votes alone: give --modes off")

    # Stopped from outside: still stop the server (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    sides = Sides(args.floor, args.rows)
    try:
        with tempfile.TemporaryDirectory() as var_dir:
            setup_django(sides.base_url, var_dir)
            sides.bodies = {
                **engine_floor.vote_bodies(BRIEFS, CONTENT),
                **engine_floor.check_bodies(BRIEFS, CONTENT),
            }
            if args.profile:
                import engine_profile

                engine_profile.profile_one(sides, args.modes[0], calls_of(args.modes[0]), args)
            else:
                measure(sides, args)
    finally:
        sides.stop_server()


def measure(sides: Sides, args: argparse.Namespace) -> None:
    n = args.judgements
    # A floor for each number of calls the modes make, and the 9-call one every ratio uses.
    floors = {calls_of(mode): mode for mode in ("off", *args.modes)}
    # Warm-up: first imports, connections and caches are not what we measure.
    for mode in args.modes:
        sides.engine(5, mode)
    for mode in floors.values():
        sides.floor(5, mode)

    # Each configuration's batch and the calls a judgement of it makes.
    configs: dict[str, tuple[Callable[[], float], int]] = {}
    for mode in args.modes:
        configs[f"engine {mode}"] = (functools.partial(sides.engine, n, mode), calls_of(mode))
    for calls, mode in floors.items():
        configs[f"floor {calls} calls"] = (functools.partial(sides.floor, n, mode), calls)
    cpu: dict[str, list[float]] = {name: [] for name in configs}
    order = list(configs)
    for pair in range(args.pairs):
        for name in order if pair % 2 == 0 else reversed(order):
            cpu[name].append(configs[name][0]())
        print(
            f"pair {pair + 1}: "
            + ", ".join(f"{name} {values[-1]:.2f} s" for name, values in cpu.items()),
            flush=True,
        )

    votes = n * VOTES_PER_JUDGEMENT
    print(
        f"\n{n} judgements a batch, {args.pairs} batches of each ({args.floor}, rows by"
        f" {args.rows}); ms CPU:"
    )
    for name, values in cpu.items():
        calls = configs[name][1]
        print(
            f"  {name:16} {1000 * statistics.median(values) / votes:6.2f} per vote decision, "
            f"{1000 * statistics.median(values) / (n * calls):6.2f} per call ({calls} calls)"
        )

    def ratio(a: str, b: str) -> float:
        return statistics.median(x / y for x, y in zip(cpu[a], cpu[b], strict=True))

    print("ratios (median over batch pairs):")
    words = {
        "default": "checks as a deployment runs them by default (the second opinion)",
        "all": "every check (a probe per agent, second opinion, screen)",
        "off": "checks off",
    }
    for mode in args.modes:
        calls = calls_of(mode)
        per_vote = ratio(f"engine {mode}", f"floor {VOTES_PER_JUDGEMENT} calls")
        line = f"  {words[mode]}: per vote decision {per_vote:.2f}x"
        if calls != VOTES_PER_JUDGEMENT:
            line += f", per call {ratio(f'engine {mode}', f'floor {calls} calls'):.2f}x"
        print(line)


if __name__ == "__main__":
    main()
