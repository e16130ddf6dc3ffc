"""What the audit log costs (docs/evidence.md): run by hand, never in the tests.

    python bench/audit_chain.py append  [--judgements 50]
        CPU per judgement on SQLite, and the part of it spent appending to the log and
        signing the receipt (11 entries and one receipt per judgement: submitted, nine
        decisions, the verdict), through MAGI's own functions (tests/support/audit_history.py).
    python bench/audit_chain.py workers --workers 1,4,8 [--appends 2000]
        appends per second with WORKERS writer processes at once on a throwaway PostgreSQL
        (Debian's postgresql package), each making APPENDS appends (an entry each, one
        transaction each, as the engine writes a decision's), with a sequencer process
        placing them meanwhile; then every entry placed, the log checked (`audit verify`)
        and its places counted: one tree, no gap, no fork.
    python bench/audit_chain.py tree [--entries 1000000]
        ENTRIES entries placed by the sequencer on SQLite, then: the sizes of inclusion and
        consistency proofs, the time to make and to check one, and `audit verify` over the
        whole log (each leaf, subtree, checkpoint and row checked).

Each prints its figures.
"""

import argparse
import os
import statistics
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
    """Wrap the log's appends and the receipt's signing with a CPU clock; the totals."""
    from judgements.audit import log, receipts

    spent = {"cpu": 0.0, "calls": 0}
    for module, name in ((log, "append"), (log, "append_many"), (receipts, "make")):
        original = getattr(module, name)

        def clocked(*args, _original=original, **kwargs):
            started = time.process_time()
            try:
                return _original(*args, **kwargs)
            finally:
                spent["cpu"] += time.process_time() - started
                spent["calls"] += 1

        setattr(module, name, clocked)
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
        f"judgement, of which the log {audit / judgements * 1000:.2f} ms "
        f"({audit / total:.1%}; {spent['calls'] / judgements:.0f} appends and receipts "
        f"per judgement, {audit / spent['calls'] * 1e6:.0f} us each)"
    )


def append_worker(appends: int, name: str) -> None:
    """One process making `appends` appends, each in a transaction of its own (as the
    engine's writes do), once the parent says go (start-up is not measured)."""
    import django

    django.setup()
    from django.db import connection, transaction

    from judgements.audit import log
    from judgements.models import EntryKind

    connection.ensure_connection()
    print("ready", flush=True)
    sys.stdin.readline()
    for number in range(appends):
        with transaction.atomic():
            log.append(EntryKind.CONFIGURATION, f"bench {name}", {"n": number, "by": name})


def sequencer_worker() -> None:
    """The sequencer on its timer, as a worker runs it, until stdin closes."""
    import threading

    import django

    django.setup()
    from judgements.audit import sequencer

    stop = threading.Event()

    def until_closed() -> None:
        sys.stdin.read()
        stop.set()

    threading.Thread(target=until_closed, daemon=True).start()
    print("ready", flush=True)
    while not stop.wait(0.2):
        sequencer.run("bench-sequencer")
    sequencer.run("bench-sequencer")


def bench_workers(counts: list[int], appends: int) -> None:
    # tests/support/services.py reads Django's settings: a throwaway SQLite site for that.
    setup_django("http://127.0.0.1:9/v1", tempfile.mkdtemp(), MODELS)
    from tests.support.services import Postgres

    server = Postgres().init()
    try:
        for workers in counts:
            one_run(server, workers, appends)
    finally:
        server.destroy()


def spawn(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        args, cwd=ROOT, env=env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )


def one_run(server, workers: int, appends: int) -> None:
    database = f"bench{workers}"
    server.admin(f"CREATE DATABASE {database}")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("MAGI_", "DJANGO_"))},
        "DATABASE_URL": server.url(database), "SECRET_KEY": "bench",
        "DJANGO_SETTINGS_MODULE": "magi_site.settings", "MAGI_AUDIT_SIGNING_KEY": KEY,
        "LOG_LEVEL": "WARNING",
    }  # fmt: skip
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True
    )
    me = [sys.executable, __file__]
    sequencing = spawn([*me, "sequencer-worker"], env)
    procs = [
        spawn([*me, "append-worker", "--appends", str(appends), "--name", f"w{n}"], env)
        for n in range(workers)
    ]
    for proc in [sequencing, *procs]:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    started = time.perf_counter()
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    codes = [proc.wait() for proc in procs]
    elapsed = time.perf_counter() - started
    assert sequencing.stdin is not None
    sequencing.stdin.close()
    assert sequencing.wait() == 0 and codes == [0] * workers, codes
    check = subprocess.run(
        [*me, "tree-check"], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    total = workers * appends
    print(
        f"workers: {workers} processes x {appends} appends on PostgreSQL: {total} appends in "
        f"{elapsed:.2f} s wall, {total / elapsed:.0f} appends/s; {check.stdout.strip()}",
        flush=True,
    )


def tree_check() -> None:
    """The log as a tree (audit/tree_checks.py): places without gap, subtrees and every
    checkpoint's root as the leaves make them; the bench's entries describe no rows."""
    import django

    django.setup()
    from judgements.audit import tree_checks, verification
    from judgements.models import Checkpoint, LogState

    walk = tree_checks.TreeWalk()
    walk.wanted = set(Checkpoint.objects.values_list("size", flat=True))
    for rows in tree_checks.entries():
        tree_checks.add_batch(rows, walk)
    tree_checks.check_checkpoints(
        walk, LogState.objects.get(), dict(verification.trust_beside_the_data().keys)
    )
    print(
        f"the tree: {walk.tree.size} entries placed, {len(walk.wanted)} checkpoints, "
        f"{len(walk.problems)} problems (a fork or a gap would be one)"
    )


def bench_tree(entries: int) -> None:
    with tempfile.TemporaryDirectory() as var_dir:
        setup_django("http://127.0.0.1:9/v1", var_dir, MODELS, MAGI_AUDIT_SIGNING_KEY=KEY,
                     MAGI_AUDIT_LOG_BATCH="20000")  # fmt: skip
        from django.db import transaction

        from judgements.audit import facts, log, proofs, sequencer, verification
        from judgements.models import AuditEntry, ChainEntry, EntryKind, LogState
        from magi_client import merkle

        log.start()
        started = time.perf_counter()
        # Audited changes made in bulk: an audit row and its entry each, so that verify
        # checks every entry against its row.
        for first in range(0, entries - 1, 20000):
            with transaction.atomic():
                rows = AuditEntry.objects.bulk_create(
                    AuditEntry(subject="team", target=f"team {n}", before=[], after=[f"u{n}"])
                    for n in range(first, min(first + 20000, entries - 1))
                )
                log.append_many(
                    [
                        log.Entry(EntryKind.CONFIGURATION, row.target, facts.configuration(row))
                        for row in rows
                    ]
                )
        sequencer.run("bench")
        made = time.perf_counter() - started
        size = LogState.objects.get().size
        root = bytes.fromhex(LogState.objects.get().root_hash)
        leaves = dict(
            ChainEntry.objects.filter(seq__in=[0, size // 3, size - 1]).values_list(
                "seq", "leaf_hash"
            )
        )
        serve, check, lengths = [], [], []
        for index in (0, size // 3, size - 1):
            began = time.perf_counter()
            proof = proofs.inclusion(index, size)
            serve.append(time.perf_counter() - began)
            lengths.append(len(proof))
            began = time.perf_counter()
            merkle.check_inclusion(
                bytes.fromhex(leaves[index]), index, size, [bytes.fromhex(p) for p in proof], root
            )
            check.append(time.perf_counter() - began)
        consistency = proofs.consistency(size // 2 + 1, size)
        began, cpu = time.perf_counter(), time.process_time()
        report = verification.verify(verification.trust_beside_the_data())
        elapsed, cpu = time.perf_counter() - began, time.process_time() - cpu
    made_ms, checked_us = statistics.median(serve) * 1000, statistics.median(check) * 1e6
    print(
        f"tree: {size} entries placed in {made:.0f} s; inclusion proofs {max(lengths)} hashes "
        f"({max(lengths) * 32} bytes), made in {made_ms:.1f} ms, checked in {checked_us:.0f} "
        f"us; consistency proof {len(consistency)} hashes ({len(consistency) * 32} bytes); "
        f"audit verify {elapsed:.0f} s wall, {cpu:.0f} s CPU "
        f"({report.entries / elapsed:.0f} entries/s), clean: {report.clean}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "what",
        choices=["append", "workers", "tree", "append-worker", "sequencer-worker", "tree-check"],
    )
    parser.add_argument("--judgements", type=int, default=50)
    parser.add_argument("--workers", default="1,4,8")
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--name", default="w")
    args = parser.parse_args()
    if args.what == "append":
        bench_append(args.judgements)
    elif args.what == "workers":
        bench_workers([int(n) for n in args.workers.split(",")], args.appends)
    elif args.what == "tree":
        bench_tree(args.entries)
    elif args.what == "sequencer-worker":
        sequencer_worker()
    elif args.what == "tree-check":
        tree_check()
    else:
        append_worker(args.appends, args.name)


if __name__ == "__main__":
    main()
