"""What the audit chain costs (docs/evidence.md): run by hand, never in the tests.

    python bench/audit_chain.py append  [--judgements 50]
        CPU per judgement on SQLite, and the part of it spent appending to the chain and
        signing its head (11 entries and one signature per judgement: submitted, nine
        decisions, the verdict), through MAGI's own functions (tests/support/audit_history.py).
    python bench/audit_chain.py workers [--workers 4] [--appends 250]
        appends per second with WORKERS processes at once on a throwaway PostgreSQL
        (Debian's postgresql package), each making APPENDS audited configuration changes
        (an audit row and its entry, one transaction each), and the chain checked after.
    python bench/audit_chain.py verify  [--entries 100000]
        `audit verify` over ENTRIES entries on SQLite: audited configuration changes made
        in bulk (an audit row and its entry each), each checked against its row.

Each prints one line of figures.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.bench_site import setup_django  # noqa: E402 - after the path above

MODELS = ("model-a", "model-b", "model-c")
KEY = "YmVuY2gtYXVkaXQta2V5LW5vdC1mb3ItcmVhbC11c2U"


def timed_appends() -> dict[str, float]:
    """Wrap the chain's append and signing with a CPU clock; the totals so far."""
    from judgements.audit import chain

    spent = {"cpu": 0.0, "calls": 0}
    for name in ("append", "sign_head"):
        original = getattr(chain, name)

        def clocked(*args, _original=original, **kwargs):
            started = time.process_time()
            try:
                return _original(*args, **kwargs)
            finally:
                spent["cpu"] += time.process_time() - started
                spent["calls"] += 1

        setattr(chain, name, clocked)
    return spent


def bench_append(judgements: int) -> None:
    with tempfile.TemporaryDirectory() as var_dir:
        # No rate or unfinished limits: the bench makes judgements back to back.
        setup_django(
            "http://127.0.0.1:9/v1",
            var_dir,
            MODELS,
            MAGI_AUDIT_SIGNING_KEY=KEY,
            MAGI_RATE_LIMIT_PER_USER="0",
            MAGI_UNFINISHED_PER_USER="0",
        )
        from django.contrib.auth import get_user_model

        from tests.support.audit_history import judge_one

        creator = get_user_model().objects.create_user("bench")
        judge_one("warm-up", creator, "warm-up")
        spent = timed_appends()
        started = time.process_time()
        for number in range(judgements):
            judge_one("bench", creator, f"Trip {number}: Japan next week.")
        total = time.process_time() - started
    audit = spent["cpu"]
    print(
        f"append: {judgements} judgements, CPU {total / judgements * 1000:.1f} ms per "
        f"judgement, of which the chain {audit / judgements * 1000:.2f} ms "
        f"({audit / total:.1%}; {spent['calls'] / judgements:.0f} appends and signatures "
        f"per judgement, {audit / spent['calls'] * 1e6:.0f} us each)"
    )


def append_worker(appends: int, name: str) -> None:
    """One process making `appends` audited changes (an audit row and its chain entry,
    as configuration/teams.py's record writes every configuration change), each in a transaction
    of its own, once the parent says go (start-up is not measured)."""
    import django

    django.setup()
    from django.db import connection

    from judgements.configuration import teams
    from judgements.models import AuditSubject

    connection.ensure_connection()
    print("ready", flush=True)
    sys.stdin.readline()
    for number in range(appends):
        teams.record(AuditSubject.TEAM, f"team {name}", None, [number], [number + 1])


def bench_workers(workers: int, appends: int) -> None:
    # tests/support/services.py reads Django's settings: a throwaway SQLite site for that.
    setup_django("http://127.0.0.1:9/v1", tempfile.mkdtemp(), MODELS)
    from tests.support.services import Postgres

    server = Postgres().init()
    try:
        server.admin("CREATE DATABASE bench")
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("MAGI_", "DJANGO_"))},
            "DATABASE_URL": server.url("bench"), "SECRET_KEY": "bench",
            "DJANGO_SETTINGS_MODULE": "magi_site.settings", "MAGI_AUDIT_SIGNING_KEY": KEY,
            "LOG_LEVEL": "WARNING",
        }  # fmt: skip
        run = [sys.executable, "manage.py", "migrate", "-v", "0"]
        subprocess.run(run, cwd=ROOT, env=env, check=True)
        me = [sys.executable, __file__, "append-worker", "--appends", str(appends)]
        procs = [
            subprocess.Popen(
                [*me, "--name", f"w{n}"],
                cwd=ROOT,
                env=env,
                text=True,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            for n in range(workers)
        ]
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        started = time.perf_counter()
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        codes = [proc.wait() for proc in procs]
        elapsed = time.perf_counter() - started
        assert codes == [0] * workers, codes
        check = subprocess.run(
            [sys.executable, "manage.py", "audit", "verify"],
            cwd=ROOT, env=env, capture_output=True, text=True,
        )  # fmt: skip
        total = workers * appends
        print(
            f"workers: {workers} processes x {appends} audited changes on PostgreSQL: {total} "
            f"appends in {elapsed:.2f} s wall, {total / elapsed:.0f} appends/s; "
            f"chain: {(check.stdout or check.stderr).strip().splitlines()[0]}"
        )
    finally:
        server.destroy()


def bench_verify(entries: int) -> None:
    with tempfile.TemporaryDirectory() as var_dir:
        setup_django("http://127.0.0.1:9/v1", var_dir, MODELS, MAGI_AUDIT_SIGNING_KEY=KEY)
        from django.db import transaction

        from judgements.audit import chain, facts, verification
        from judgements.models import AuditEntry, ChainEntry, EntryKind

        with transaction.atomic():
            head = chain.locked_head()
            rows = AuditEntry.objects.bulk_create(
                AuditEntry(subject="team", target=f"team {n}", before=[], after=[f"u{n}"])
                for n in range(entries - 1)
            )
            made = [
                chain.next_entry(
                    head, EntryKind.CONFIGURATION, row.target, facts.configuration(row)
                )
                for row in rows
            ]
            ChainEntry.objects.bulk_create(made, batch_size=2000)
            chain.save_head(head)
        started, cpu = time.perf_counter(), time.process_time()
        report = verification.verify()
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(
        f"verify: {report.entries} entries on SQLite in {elapsed:.1f} s wall, {cpu:.1f} s CPU "
        f"({report.entries / elapsed:.0f} entries/s); clean: {report.clean}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["append", "workers", "verify", "append-worker"])
    parser.add_argument("--judgements", type=int, default=50)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--appends", type=int, default=250)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--name", default="w")
    args = parser.parse_args()
    if args.what == "append":
        bench_append(args.judgements)
    elif args.what == "workers":
        bench_workers(args.workers, args.appends)
    elif args.what == "verify":
        bench_verify(args.entries)
    else:
        append_worker(args.appends, args.name)


if __name__ == "__main__":
    main()
