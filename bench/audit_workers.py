"""The `workers` measure of bench/audit_chain.py (run it from there, never in the tests):
the parent's side. For each side (a checkout's MAGI, or the bare psycopg floor) and each
number of writers, a fresh database on a throwaway PostgreSQL, migrated by that side's
tree; the writers and a sequencer started as bench/audit_chain.py's *-worker processes,
told to go at once; appends/s, the CPU per append of each group of processes (/proc),
their context switches and what the writers' server processes wait on
(pg_stat_activity), then the tree checked (audit_chain.py tree-check)."""

import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.bench_site import cpu_seconds, postgres_pids, setup_django


@dataclass(frozen=True)
class Bench:
    """What every run shares: the script its processes run, the signing key, the models
    of the throwaway site, and how many appends each writer makes."""

    script: Path
    key: str
    models: tuple[str, ...]
    appends: int


@dataclass(frozen=True)
class Side:
    """What writes: a tree's MAGI (log.append in a transaction) or the bare floor."""

    tree: Path
    bare: bool = False

    @property
    def name(self) -> str:
        return "bare psycopg" if self.bare else self.tree.name


def bench_workers(bench: Bench, counts: list[int], sides: list[Side], repeats: int) -> None:
    # tests/support/services.py reads Django's settings: a throwaway SQLite site for that.
    setup_django("http://127.0.0.1:9/v1", tempfile.mkdtemp(), bench.models)
    from tests.support.services import Postgres

    server = Postgres().init()
    results: dict[tuple[str, int], list[dict[str, float]]] = {}
    try:
        for repeat in range(repeats):
            for workers in counts:
                # Sides alternate, their order flipped every repeat: a machine whose load
                # drifts slows both sides alike.
                for side in sides if repeat % 2 == 0 else sides[::-1]:
                    database = f"bench_{repeat}_{workers}_{sides.index(side)}"
                    run = one_run(bench, server, database, side, workers)
                    results.setdefault((side.name, workers), []).append(run)
    finally:
        server.destroy()
    print(f"\nmedians over {repeats} repeat(s), load average now {os.getloadavg()[0]:.1f}:")
    for (name, workers), runs in sorted(results.items(), key=lambda item: item[0][1]):
        median = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        rates = ", ".join(f"{run['rate']:.0f}" for run in runs)
        print(f"  {name}, {workers} writer(s): {fmt(median)} (appends/s: {rates})")


def fmt(run: dict[str, float]) -> str:
    return (
        f"{run['rate']:.0f} appends/s; CPU per append (us): writers {run['writers']:.0f}, "
        f"their PostgreSQL backends {run['backends']:.0f}, sequencer {run['sequencer']:.0f}, "
        f"its backend {run['seq_backend']:.0f}, the rest of PostgreSQL {run['pg_rest']:.0f}; "
        f"queued when the writers ended {run['queued']:.0f}; context switches per append "
        f"(writers and backends) {run['switches']:.1f}, {run['forced']:.2f} of them forced"
    )


def context_switches(pids: list[int]) -> tuple[int, int]:
    """Voluntary and involuntary context switches of these processes so far."""
    counts = [0, 0]
    for pid in pids:
        try:
            lines = Path(f"/proc/{pid}/status").read_text().splitlines()
        except FileNotFoundError:
            continue
        for line in lines:
            if line.startswith("voluntary_ctxt_switches"):
                counts[0] += int(line.split()[1])
            elif line.startswith("nonvoluntary_ctxt_switches"):
                counts[1] += int(line.split()[1])
    return counts[0], counts[1]


class WaitSampler:
    """What the writers' server processes wait on, sampled every 20 ms from
    pg_stat_activity while they append (a lock they queue on would show)."""

    def __init__(self, url: str, pids: list[int]) -> None:
        import collections
        import threading

        self.seen: collections.Counter[str] = collections.Counter()
        self.url, self.pids = url, pids
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.sample, daemon=True)
        self.thread.start()

    def sample(self) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            while not self.done.wait(0.02):
                rows = conn.execute(
                    "SELECT state, wait_event_type, wait_event FROM pg_stat_activity "
                    "WHERE pid = ANY(%s)",
                    [self.pids],
                ).fetchall()
                for state, kind, event in rows:
                    self.seen[f"{state}:{kind}:{event}"] += 1

    def stop(self) -> None:
        self.done.set()
        self.thread.join()


def spawn(args: list[str], env: dict[str, str], tree: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        args, cwd=tree, env=env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )


def tell(proc: subprocess.Popen[str], line: str) -> None:
    assert proc.stdin is not None
    proc.stdin.write(line)
    proc.stdin.flush()


@dataclass
class Processes:
    """One run's processes: the sequencer, the writers, and each one's server process."""

    sequencing: subprocess.Popen[str]
    writers: list[subprocess.Popen[str]]
    backend: dict[subprocess.Popen[str], int]

    def groups(self, server) -> dict[str, list[int]]:
        """The processes whose CPU is counted apart, by name (fmt's)."""
        groups = {
            "writers": [proc.pid for proc in self.writers],
            "backends": [self.backend[proc] for proc in self.writers],
            "sequencer": [self.sequencing.pid],
            "seq_backend": [self.backend[self.sequencing]],
        }
        mine = {pid for pids in groups.values() for pid in pids}
        groups["pg_rest"] = [pid for pid in postgres_pids(server.data) if pid not in mine]
        return groups


def environment(bench: Bench, url: str, tree: Path) -> dict[str, str]:
    """The processes' environment: the side's database and tree, none of ours."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("MAGI_", "DJANGO_"))},
        "DATABASE_URL": url, "SECRET_KEY": "bench",
        "DJANGO_SETTINGS_MODULE": "magi_site.settings", "MAGI_AUDIT_SIGNING_KEY": bench.key,
        "LOG_LEVEL": "WARNING", "MAGI_AUDIT_LOG_INTERVAL": "0.2",
        # The tree's own code first (the virtualenv's editable install points at this one).
        "PYTHONPATH": f"{tree}:{tree / 'clients/magi-client/src'}",
        "BENCH_TREE": str(tree),
    }  # fmt: skip


def started(bench: Bench, side: Side, workers: int, env: dict[str, str]) -> Processes:
    """The sequencer and the writers, each ready (its server process named), none gone."""
    me = [sys.executable, str(bench.script)]
    sequencing = spawn([*me, "sequencer-worker"], env, side.tree)
    kind = "bare-worker" if side.bare else "append-worker"
    writers = [
        spawn([*me, kind, "--appends", str(bench.appends), "--name", f"w{n}"], env, side.tree)
        for n in range(workers)
    ]
    backend: dict[subprocess.Popen[str], int] = {}
    for proc in [sequencing, *writers]:
        assert proc.stdout is not None
        word, pid = proc.stdout.readline().split()
        assert word == "ready", word
        backend[proc] = int(pid)
    return Processes(sequencing, writers, backend)


def ended(procs: Processes, url: str) -> int:
    """How many entries were still queued when the writers ended; then every process
    told to exit, and each gone cleanly."""
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM judgements_chainentry WHERE seq IS NULL")
        queued = row.fetchone()
    for proc in procs.writers:
        tell(proc, "exit\n")
    codes = [proc.wait() for proc in procs.writers]
    assert procs.sequencing.stdin is not None
    procs.sequencing.stdin.close()
    assert procs.sequencing.wait() == 0 and codes == [0] * len(codes), codes
    return int(queued[0]) if queued else 0


def one_run(bench: Bench, server, database: str, side: Side, workers: int) -> dict[str, float]:
    """One run of `workers` writers of `side` beside its tree's sequencer, on a fresh
    database migrated by that tree: appends/s and CPU per append by process."""
    server.admin(f"CREATE DATABASE {database}")
    url = server.url(database)
    env = environment(bench, url, side.tree)
    migrate = [sys.executable, "manage.py", "migrate", "-v", "0"]
    subprocess.run(migrate, cwd=side.tree, env=env, check=True)
    procs = started(bench, side, workers, env)
    groups = procs.groups(server)
    before = {name: cpu_seconds(pids) for name, pids in groups.items()}
    switches = context_switches(groups["writers"] + groups["backends"])
    waits = WaitSampler(url, groups["backends"])
    began = time.perf_counter()
    for proc in procs.writers:
        tell(proc, "go\n")
    for proc in procs.writers:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "done"
    elapsed = time.perf_counter() - began
    after = {name: cpu_seconds(pids) for name, pids in groups.items()}
    switched = context_switches(groups["writers"] + groups["backends"])
    waits.stop()
    queued = ended(procs, url)
    check = subprocess.run([sys.executable, str(bench.script), "tree-check"], cwd=side.tree,
                           env=env, capture_output=True, text=True, check=True)  # fmt: skip
    server.admin(f"DROP DATABASE {database}")
    total = workers * bench.appends
    run = {name: (after[name] - before[name]) / total * 1e6 for name in groups}
    run.update(rate=total / elapsed, queued=float(queued))
    run["switches"] = (switched[0] - switches[0]) / total
    run["forced"] = (switched[1] - switches[1]) / total
    busiest = ", ".join(f"{what} {count}" for what, count in waits.seen.most_common(4))
    print(f"  the writers' server processes, sampled every 20 ms: {busiest}")
    print(
        f"{side.name}, {workers} writer(s) x {bench.appends} on PostgreSQL, load average "
        f"{os.getloadavg()[0]:.1f}: {total} in {elapsed:.2f} s, {fmt(run)}; "
        f"{check.stdout.strip()}",
        flush=True,
    )
    return run
