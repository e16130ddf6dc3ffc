"""Abuse benchmark: a burst of judgement creations from one API token, with reads timed
while it lasts.

    .venv/bin/python bench/abuse.py                 # 200 creations from 32 threads
    .venv/bin/python bench/abuse.py -n 500 --threads 64 --latency 0.5

The embedded default (daphne, SQLite, in-memory channel layer, engine in the web process)
with its default limits, every model the suite's fake OpenAI-compatible server answering
after --latency seconds. One token sends -n creations as fast as --threads threads can;
meanwhile two readers loop over GET /healthz and GET /api/judgements/<id>/ of a finished
judgement. The report gives accepted (201) and limited (429) counts, anything else, and
the p50/p95/max of the reads during the burst (target: p95 under 200 ms on 2 cores).

The readers run in a process of their own: in the senders' process a read's time would
include waiting for that process's GIL behind 32 sender threads and the fake model server,
which is the benchmark's cost, not the server's.
"""

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "magi_site.settings")
os.environ.setdefault("SECRET_KEY", "benchmark-only")

from tests.support.live_site import MODELS, LiveMagi  # noqa: E402
from tests.support.llm_server import FakeLLM  # noqa: E402

CASE = {
    "title": "Burst",
    "content": "I am going to travel to Japan next week.",
    "agents": [
        {"name": name, "model": model, "criteria": f"{name} approves only safe plans."}
        for name, model in zip(("Melchior", "Balthasar", "Casper"), MODELS, strict=False)
    ],
}


def call(url: str, key: str, body: bytes | None = None) -> tuple[int, dict]:
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    request = urllib.request.Request(url, data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def read_loop(url: str, key: str, stop, timings) -> None:
    while not stop.is_set():
        began = time.perf_counter()
        status, _ = call(url, key)
        if status == 200:
            timings.append(time.perf_counter() - began)


def readers_process(urls: dict[str, str], key: str, stop, results) -> None:
    """Loop over each URL in a thread until `stop`, then hand back the timings."""
    timings: dict[str, list[float]] = {name: [] for name in urls}
    threads = [
        threading.Thread(target=read_loop, args=(url, key, stop, timings[name]))
        for name, url in urls.items()
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put(timings)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))] if ordered else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--count", type=int, default=200, help="creations to send")
    parser.add_argument("--threads", type=int, default=32, help="concurrent senders")
    parser.add_argument("--latency", type=float, default=0.2, help="model answer delay, s")
    args = parser.parse_args()

    llm = FakeLLM().start()
    for model in MODELS:
        llm.script(model, delay=args.latency)
    with tempfile.TemporaryDirectory(prefix="magi-abuse-") as var_dir:
        site = LiveMagi(Path(var_dir), llm.base_url, users=1, LOG_LEVEL="WARNING").start()
        try:
            key = site.manage("api_token", site.usernames[0]).strip()
            api = f"{site.url}/api/judgements/"
            # One finished judgement to read during the burst.
            status, first = call(f"{api}?wait=60", key, json.dumps(CASE).encode())
            assert status == 201 and first["status"] != "idle", first
            urls = {"healthz": f"{site.url}/healthz", "judgement": f"{api}{first['id']}/"}
            context = multiprocessing.get_context("spawn")
            stop = context.Event()
            results = context.Queue()
            readers = context.Process(target=readers_process, args=(urls, key, stop, results))
            readers.start()
            body = json.dumps(CASE).encode()
            began = time.monotonic()
            with ThreadPoolExecutor(max_workers=args.threads) as pool:
                statuses = list(pool.map(lambda _: call(api, key, body)[0], range(args.count)))
            burst_seconds = time.monotonic() - began
            stop.set()
            reads = results.get()
            readers.join()
        finally:
            site.stop()
            llm.stop()
    report = {
        "creations": args.count,
        "threads": args.threads,
        "accepted_201": statuses.count(201),
        "limited_429": statuses.count(429),
        "other": sorted({s for s in statuses if s not in (201, 429)}),
        "burst_s": round(burst_seconds, 2),
    }
    for name, timings in reads.items():
        report[f"{name}_reads"] = len(timings)
        report[f"{name}_p50_ms"] = round(1000 * statistics.median(timings), 1) if timings else None
        report[f"{name}_p95_ms"] = round(1000 * percentile(timings, 0.95), 1)
        report[f"{name}_max_ms"] = round(1000 * max(timings, default=0.0), 1)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
