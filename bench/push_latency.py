"""Push latency of the live page: .venv/bin/python bench/push_latency.py [--judgements N]

Starts the suite's fake OpenAI-compatible server, MAGI under daphne on the embedded
default (SQLite, in-memory channel layer, engine in the web process) and a headless
Chromium showing each judgement's live page. For every decision it measures the time
from the decision row's created_at (set when the engine builds the row, just before it is
inserted and committed: the measure includes the commit) to the moment the page's DOM
shows it (a MutationObserver notes Date.now() when a box's history gains the line). Both
are wall-clock epoch milliseconds on this one machine. Prints p50, p95 and max.

The page is connected before any model answers (the fake server holds the calls until
the page's websocket is open), so page loading is not counted.
"""

import argparse
import math
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


from tests.support.live_site import (  # noqa: E402
    LiveMagi,
    chromium,
    submit_judgement,
)
from tests.support.llm_server import FakeLLM  # noqa: E402

TARGET_P95_MS = 100.0

# Runs in the page before its own scripts: the first time each box shows n decisions.
OBSERVER_JS = """
window.__magiSeen = {};
window.__magiSocketOpen = false;
document.addEventListener("htmx:wsOpen", () => { window.__magiSocketOpen = true; });
const note = () => {
  const now = Date.now();
  for (const box of document.querySelectorAll(".agent-box")) {
    const key = `${box.id}:${box.querySelectorAll(".agent-history li").length}`;
    if (!(key in window.__magiSeen)) window.__magiSeen[key] = now;
  }
};
new MutationObserver(note).observe(document, {childList: true, subtree: true});
"""

AGENTS = [
    ("Melchior", "model-a", "Approve only legal actions."),
    ("Balthasar", "model-b", "Approve only safe actions."),
    ("Casper", "model-c", "Approve only affordable actions."),
]
SCRIPTS = {  # votes and a think time that spreads each round's answers apart
    "model-a": ("AAR", 0.020),
    "model-b": ("RAA", 0.045),
    "model-c": ("ARR", 0.070),
}


def epoch_ms(stored: str) -> float:
    """Django's SQLite datetime text (UTC, USE_TZ) as epoch milliseconds."""
    moment = datetime.fromisoformat(stored)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp() * 1000


def decisions(db_path: Path, judgement_id: int) -> list[tuple[int, int, float]]:
    with sqlite3.connect(db_path) as db:
        rows = db.execute(
            "SELECT a.position, d.round, d.created_at FROM judgements_rounddecision d"
            " JOIN judgements_agent a ON a.id = d.agent_id WHERE a.judgement_id = ?",
            (judgement_id,),
        ).fetchall()
    return [(position, rnd, epoch_ms(created)) for position, rnd, created in rows]


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgements", type=int, default=10)
    parser.add_argument("--verbose", action="store_true", help="print every latency")
    args = parser.parse_args()

    llm = FakeLLM().start()
    for model, (votes, delay) in SCRIPTS.items():
        llm.script(model, votes=votes, delay=delay)
    latencies: list[float] = []
    with tempfile.TemporaryDirectory(prefix="magi-bench-") as var_dir:
        magi = LiveMagi(Path(var_dir), llm.base_url, users=1)
        try:
            magi.start()
            with chromium() as browser:
                context = browser.new_context(base_url=magi.url)
                session = magi.sessions[magi.usernames[0]]
                context.add_cookies([{"name": "sessionid", "value": session, "url": magi.url}])
                context.add_init_script(OBSERVER_JS)
                page = context.new_page()
                for number in range(1, args.judgements + 1):
                    llm.gate.close()
                    judgement_id = submit_judgement(page, f"Bench {number}", "Go.", AGENTS)
                    page.wait_for_function("window.__magiSocketOpen", timeout=10_000)
                    llm.gate.open()
                    page.wait_for_selector(
                        "#judgement-status:is([data-status=approved], [data-status=rejected],"
                        " [data-status=error])",
                        timeout=30_000,
                    )
                    seen = page.evaluate("window.__magiSeen")
                    for position, rnd, created in decisions(magi.db_path, judgement_id):
                        shown = seen.get(f"agent-box-{position}:{rnd}")
                        if shown is None:
                            raise SystemExit(
                                f"judgement {judgement_id}: R{rnd} of box {position} never shown"
                            )
                        latencies.append(shown - created)
                        if args.verbose:
                            print(f"J{number} R{rnd} box {position}: {shown - created:.1f} ms")
        finally:
            magi.stop()
            llm.stop()

    p50, p95 = statistics.median(latencies), percentile(latencies, 0.95)
    print(f"decisions measured: {len(latencies)} over {args.judgements} judgements")
    print(
        f"commit -> DOM latency ms: p50 {p50:.1f}  p95 {p95:.1f}  max {max(latencies):.1f}"
        f"  min {min(latencies):.1f}  mean {statistics.fmean(latencies):.1f}"
    )
    verdict = "meets" if p95 < TARGET_P95_MS else "MISSES"
    print(f"target p95 < {TARGET_P95_MS:.0f} ms: {verdict}")
    return 0 if p95 < TARGET_P95_MS else 1


if __name__ == "__main__":
    started = time.monotonic()
    code = main()
    print(f"(ran in {time.monotonic() - started:.1f} s)")
    sys.exit(code)
