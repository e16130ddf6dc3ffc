"""Engine overhead: wall time of whole judgements against the limit 3·L, where L is a
fixed per-call latency of the suite's OpenAI-compatible test server.

    .venv/bin/python bench/engine_overhead.py [--latency 0.2] [--concurrent 50]

Targets: <= 1.05 for one judgement at L = 200 ms, <= 1.5 for 50 at once. Runs on the
embedded default (SQLite in a temporary directory), through the real SDK over HTTP.
"""

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support import bench_site  # noqa: E402

MODELS = ("bench-a", "bench-b", "bench-c")


def start_llm_server(latency: float) -> subprocess.Popen:
    """The test server in a process of its own, so it does not compete for our GIL."""
    return bench_site.start_llm_server(MODELS, latency)


def setup_django(base_url: str, var_dir: str) -> None:
    bench_site.setup_django(base_url, var_dir, MODELS)


def new_judgements(count: int) -> list[int]:
    from judgements.intake.schemas import CaseJson, validated
    from judgements.intake.start import Submission, submit

    case = {
        "title": "bench",
        "content": "I am going to travel to Japan next week.",
        "agents": [
            {"name": f"agent-{i}", "model": model, "criteria": "Approve safe plans."}
            for i, model in enumerate(MODELS)
        ],
    }
    valid = validated(CaseJson, case).case()
    return [submit([valid], Submission()).judgement.pk for _ in range(count)]


async def run_all(ids: list[int]) -> tuple[float, list[float]]:
    from judgements.engine.runner import EngineRunner

    runner = EngineRunner()
    per_judgement: list[float] = []

    async def one(judgement_id: int) -> None:
        began = time.perf_counter()
        assert await runner.run_judgement(judgement_id)
        per_judgement.append(time.perf_counter() - began)

    began = time.perf_counter()
    await asyncio.gather(*(one(i) for i in ids))
    return time.perf_counter() - began, per_judgement


def check_statuses(ids: list[int]) -> dict[str, int]:
    from django.db.models import Count

    from judgements.models import Judgement

    rows = Judgement.objects.filter(pk__in=ids).values("status").annotate(n=Count("id"))
    return {row["status"]: row["n"] for row in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per LLM call")
    parser.add_argument("--concurrent", type=int, default=50)
    args = parser.parse_args()

    server = start_llm_server(args.latency)
    try:
        assert server.stdout is not None  # started with stdout=PIPE
        measure(server.stdout.readline().strip(), args)
    finally:
        server.terminate()
        server.wait()


def measure(base_url: str, args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as var_dir:
        setup_django(base_url, var_dir)
        limit = 3 * args.latency
        # Warm-up: first connections and imports are not what we measure.
        asyncio.run(run_all(new_judgements(1)))

        wall, _ = asyncio.run(run_all(new_judgements(1)))
        print(f"one judgement:   {wall:.3f} s wall, ratio {wall / limit:.3f} (target <= 1.05)")

        ids = new_judgements(args.concurrent)
        wall, each = asyncio.run(run_all(ids))
        ratios = sorted(t / limit for t in each)
        p95 = ratios[int(0.95 * (len(ratios) - 1))]
        print(
            f"{args.concurrent} concurrent: {wall:.3f} s wall, ratio {wall / limit:.3f} "
            f"(target <= 1.5); per judgement p50 {statistics.median(ratios):.3f}, p95 {p95:.3f}"
        )
        print(f"statuses: {check_statuses(ids)}")


if __name__ == "__main__":
    main()
