"""What the audit log costs (docs/evidence.md): run by hand, never in the tests.

    python bench/audit_chain.py append  [--judgements 50]
        CPU per judgement on SQLite, and the part of it spent appending to the log and
        signing the receipt (11 entries and one receipt per judgement: submitted, nine
        decisions, the verdict), through MAGI's own functions (tests/support/audit_history.py).
    python bench/audit_chain.py workers --workers 1,4,8 [--appends 2000] [--repeats 3]
                                        [--tree OLD_CHECKOUT --tree .] [--bare]
        appends per second with WORKERS writer processes at once on a throwaway PostgreSQL
        (Debian's postgresql package), each making APPENDS appends (an entry each, one
        transaction each, as the engine writes a decision's), with a sequencer process
        placing them meanwhile; then every entry placed and the tree checked: its places
        counted and every checkpoint's root recomputed (one tree, no gap, no fork). Beside
        the rate: CPU per append of the writers, their PostgreSQL server processes, the
        sequencer and the rest of PostgreSQL (/proc), context switches, what the writers'
        server processes wait on (pg_stat_activity, sampled), and how many entries were
        still queued when the writers ended. Each --tree is a checkout whose code is
        measured (its own migrations, its own log.append and sequencer; a `git worktree`
        of an older commit), sides alternating, their order flipped every repeat; --bare
        adds the floor: the same rows, hashed the same, inserted by psycopg alone.
    python bench/audit_chain.py tree [--entries 1000000]
        ENTRIES entries placed by the sequencer on SQLite, then: the sizes of inclusion and
        consistency proofs, the time to make and to check one, and `audit verify` over the
        whole log (each leaf, subtree, checkpoint and row checked).

Each prints its figures.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

# The code measured: this tree, or (workers --tree) the tree a worker process was started in.
ROOT = Path(os.environ.get("BENCH_TREE") or Path(__file__).resolve().parents[1])
sys.path.insert(0, str(ROOT))

from tests.support.bench_site import setup_django  # noqa: E402 - after the path above

MODELS = ("model-a", "model-b", "model-c")
MEASURES = ("append", "workers", "tree")
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
    engine's writes do), once the parent says go (start-up is not measured); it waits to
    be told to exit, so that its and its server process's CPU can still be read."""
    import django

    django.setup()
    from django.db import connection, transaction

    from judgements.audit import log
    from judgements.models import EntryKind

    connection.ensure_connection()
    print(f"ready {connection.connection.info.backend_pid}", flush=True)
    sys.stdin.readline()
    for number in range(appends):
        with transaction.atomic():
            log.append(EntryKind.CONFIGURATION, f"bench {name}", {"n": number, "by": name})
    print("done", flush=True)
    sys.stdin.readline()


def bare_worker(appends: int, name: str) -> None:
    """The floor: the same rows, hashed and tagged the same (magi_client and
    core/entry_tags.py, no Django), each inserted in a transaction of its own with psycopg
    alone: what the database and this machine allow, without MAGI's code around the
    statement."""
    import psycopg

    from judgements.core.entry_tags import tag, tag_key
    from magi_client.canonical import canonical, entry_leaf_hash, timestamp
    from magi_client.receipts import unb64url

    key = tag_key(unb64url(os.environ["MAGI_AUDIT_SIGNING_KEY"]))
    conn = psycopg.connect(os.environ["DATABASE_URL"])
    print(f"ready {conn.info.backend_pid}", flush=True)
    sys.stdin.readline()
    for number in range(appends):
        at = datetime.now(UTC)
        payload = canonical({"n": number, "by": name}).decode()
        digest = entry_leaf_hash("configuration", f"bench {name}", None, timestamp(at), payload)
        with conn.transaction():
            conn.execute(
                "INSERT INTO judgements_chainentry (kind, subject, judgement_id, at, payload, "
                "prev_sha256, leaf_hash, tag) VALUES (%s, %s, NULL, %s, %s, '', %s, %s) "
                "RETURNING id",
                ("configuration", f"bench {name}", at, payload, digest, tag(key, digest)),
            ).fetchone()
    print("done", flush=True)
    sys.stdin.readline()


def sequencer_worker() -> None:
    """The sequencer on its timer, as a worker runs it, until stdin closes."""
    import threading

    import django

    django.setup()
    from django.db import connection

    from judgements.audit import sequencer
    from judgements.models.magi_settings import magi_settings

    stop = threading.Event()

    def until_closed() -> None:
        sys.stdin.read()
        stop.set()

    threading.Thread(target=until_closed, daemon=True).start()
    connection.ensure_connection()
    print(f"ready {connection.connection.info.backend_pid}", flush=True)
    while not stop.wait(magi_settings.MAGI_AUDIT_LOG_INTERVAL):
        sequencer.run("bench-sequencer")
    sequencer.run("bench-sequencer")


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

        from judgements.audit import log, proofs, record, sequencer, verification
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
                        log.Entry(
                            EntryKind.CONFIGURATION, row.target, record.configuration_fact(row)
                        )
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
        choices=[*MEASURES, "append-worker", "bare-worker", "sequencer-worker", "tree-check"],
    )
    parser.add_argument("--judgements", type=int, default=50)
    parser.add_argument("--workers", default="1,4,8")
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--name", default="w")
    parser.add_argument(
        "--tree",
        action="append",
        type=Path,
        help="workers: a checkout whose code to measure (repeat to compare trees side by side)",
    )
    parser.add_argument("--repeats", type=int, default=1, help="workers: runs of each side")
    parser.add_argument(
        "--bare", action="store_true", help="workers: and the floor, psycopg alone, beside"
    )
    args = parser.parse_args()
    if args.what == "append":
        bench_append(args.judgements)
    elif args.what == "workers":
        # The parent's side of the measure (bench/audit_workers.py, beside this script);
        # the processes it starts run this script's *-worker and tree-check.
        import audit_workers

        sides = [audit_workers.Side(tree.resolve()) for tree in args.tree or [ROOT]]
        if args.bare:
            sides.append(audit_workers.Side(ROOT, bare=True))
        counts = [int(n) for n in args.workers.split(",")]
        run = audit_workers.Bench(Path(__file__), KEY, MODELS, args.appends)
        audit_workers.bench_workers(run, counts, sides, args.repeats)
    elif args.what == "tree":
        bench_tree(args.entries)
    elif args.what == "bare-worker":
        bare_worker(args.appends, args.name)
    elif args.what == "sequencer-worker":
        sequencer_worker()
    elif args.what == "tree-check":
        tree_check()
    else:
        append_worker(args.appends, args.name)


if __name__ == "__main__":
    main()
