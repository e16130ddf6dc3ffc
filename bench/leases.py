"""The cost of claiming background work: queries and milliseconds per claim, per kind.

    .venv/bin/python bench/leases.py [--rows 300] [--postgres]

Judgements (engine/lifecycle.claim), webhook deliveries (outcome/webhooks.claim_one)
and reviewers' emails (outcome/notifications.claim) are made as free rows, then claimed
one at a time (and, for judgements and emails, 20 at a time) until none is left, each
claim in its own transaction as a worker makes it. Reported: the median wall and CPU
milliseconds and the queries of one claim. On a fresh SQLite database in a temporary directory, or
(--postgres) a throwaway PostgreSQL cluster (tests/support/services.py; needs Debian's
`postgresql`).

It reads only the claim functions' names, which are the same before and after the
lease became one (issue 51), so that it measures both: copy it into a checkout of the
earlier commit and run it there with this venv (docs/benchmarks.md, "Claiming background
work").
"""

import argparse
import inspect
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support import bench_site  # noqa: E402

if TYPE_CHECKING:
    # Only named for the type checker: the models load after bench_site sets Django up.
    from judgements.models import Judgement

MODELS = ("bench-a", "bench-b", "bench-c")


def make_rows(rows: int) -> None:
    """`rows` queued judgements (started the one way in, intake/start.py), a pending
    delivery and an unsent email for each."""
    from django.contrib.auth.models import User

    from judgements.models import Notification, WebhookDelivery

    reviewer = User.objects.create_user("reviewer", email="r@example.com")
    judgements = make_judgements(rows)
    WebhookDelivery.objects.bulk_create(
        WebhookDelivery(judgement=j, event="judgement.finished", url="https://x", payload={})
        for j in judgements
    )
    Notification.objects.bulk_create(Notification(judgement=j, user=reviewer) for j in judgements)


def make_judgements(rows: int) -> list["Judgement"]:
    """`rows` queued judgements, started the one way in."""
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
    judgements: list[Judgement] = []
    for start in range(0, rows, 50):
        judgements += submit(
            [validated(CaseJson, case).case()] * min(50, rows - start), Submission()
        ).judgements
    return judgements


def claimers() -> dict[str, Callable[[int], int]]:
    """Each kind's claim of `limit` rows as a worker makes it; returns how many it took."""
    from django.utils import timezone

    from judgements.engine import lifecycle
    from judgements.models import Judgement
    from judgements.outcome import notifications, webhooks

    def judgements(limit: int) -> int:
        return len(lifecycle.claim("bench", Judgement.objects.all(), limit))

    def deliveries(limit: int) -> int:
        return 0 if webhooks.claim_one("bench") is None else 1

    takes_worker = "worker_id" in inspect.signature(notifications.claim).parameters

    def emails(limit: int) -> int:
        claim: Any = notifications.claim  # its signature changed with issue 51
        if takes_worker:
            return len(claim("bench", timezone.now(), limit=limit))
        return len(claim(timezone.now(), limit=limit))

    return {"judgement": judgements, "webhook delivery": deliveries, "email": emails}


def measure(claim: Callable[[int], int], limit: int) -> tuple[float, float, float]:
    """Claim until nothing is left: (median wall ms, median CPU ms of this process, queries)
    per claim. On SQLite the CPU is all of it; on PostgreSQL the server's is not counted."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    times: list[float] = []
    cpu: list[float] = []
    queries = 0
    while True:
        with CaptureQueriesContext(connection) as captured:
            started, started_cpu = time.perf_counter(), time.process_time()
            taken = claim(limit)
            elapsed, elapsed_cpu = time.perf_counter() - started, time.process_time() - started_cpu
        if not taken:
            return statistics.median(times), statistics.median(cpu), queries / len(times)
        times.append(elapsed * 1000)
        cpu.append(elapsed_cpu * 1000)
        queries += len(captured.captured_queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--postgres", action="store_true")
    # The child that measures on the cluster --postgres started (Django reads the URL once).
    parser.add_argument("--database-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.postgres:
        on_postgres(args.rows)
        return
    with tempfile.TemporaryDirectory() as var_dir:
        extra = {"DATABASE_URL": args.database_url} if args.database_url else {}
        bench_site.setup_django("http://127.0.0.1:9/v1", var_dir, MODELS, **extra)
        make_rows(args.rows)
        print(f"{'postgresql' if args.database_url else 'sqlite'}, {args.rows} rows a kind")
        for kind, claim in claimers().items():
            for limit in (1, 20) if kind != "webhook delivery" else (1,):
                ms, cpu, queries = measure(claim, limit)
                reset(kind, args.rows)
                print(
                    f"  {kind:17} {limit:>2} a claim: {ms:6.2f} ms wall, {cpu:6.2f} ms CPU, "
                    f"{queries:.1f} queries"
                )


def on_postgres(rows: int) -> None:
    """A throwaway cluster, and this script measuring on it in a process of its own."""
    # tests/support/services.py reads Django's settings: a throwaway SQLite site for that.
    bench_site.setup_django("http://127.0.0.1:9/v1", tempfile.mkdtemp(), MODELS, migrate=False)
    from tests.support.services import Postgres

    server = Postgres().init()
    try:
        server.admin("CREATE DATABASE bench")
        child = [sys.executable, __file__, "--rows", str(rows)]
        subprocess.run([*child, "--database-url", server.url("bench")], cwd=ROOT, check=True)
    finally:
        server.destroy()


def reset(kind: str, rows: int) -> None:
    """Free rows of the kind again, for the next batch size."""
    from judgements.models import Notification, WebhookDelivery

    if kind == "judgement":
        # A claimed judgement goes on along its graph, never back to idle: the next batch
        # claims `rows` new ones (those claimed stay held, by a lease that outlasts it).
        make_judgements(rows)
    elif kind == "webhook delivery":
        WebhookDelivery.objects.update(lease_owner="", lease_expires_at=None, attempt_count=0)
    else:
        # Before issue 51 an email's claim had a field of its own.
        field = "lease_expires_at" if hasattr(Notification, "lease_owner") else "claimed_until"
        Notification.objects.update(**{field: None})


if __name__ == "__main__":
    main()
