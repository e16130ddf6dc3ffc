"""Profiling one batch of bench/engine_cpu.py (`--profile FILE`): the SQL statements the
engine runs, and the CPU of its event loop and of its database thread, each a profile of
its own (or the floor's event loop, `--profile-floor`).
"""

import argparse
import cProfile
import pstats
import time
from typing import Any

from judgements.core import rules


def profile_one(sides: Any, mode: str, calls: int, args: argparse.Namespace) -> None:
    """One engine batch of `mode` (or, with --profile-floor, one floor batch), its
    queries counted and each thread's CPU profiled into --profile."""
    n = args.judgements
    if args.profile_floor:
        sides.floor(5, mode)  # warm up: imports, connections
        profile = cProfile.Profile(time.thread_time)
        cpu = sides.floor(n, mode, profile)
        print(f"profiled floor batch: {cpu:.2f} s CPU for {n} judgements (checks {mode})")
        profile.dump_stats(args.profile)
        stats = pstats.Stats(args.profile)
        stats.sort_stats("cumulative").print_stats(70)
        return
    sides.engine(5, mode)  # warm up: imports, connections
    total, kinds = count_queries(sides, n, mode)
    print(
        f"queries: {total / (n * rules.PANEL_SIZE * rules.ROUNDS):.1f} per vote decision, "
        f"{total / (n * calls):.1f} per call, {total / n:.1f} per judgement: {kinds}"
    )
    # CPU time, not wall time, per thread: the event loop's and the database thread's
    # (where the engine's ORM code runs) each get a profile of their own.
    from judgements.infrastructure.database import db_executor

    loop_profile = cProfile.Profile(time.thread_time)
    db_profile = cProfile.Profile(time.thread_time)
    db_executor().submit(db_profile.enable).result()
    cpu = sides.engine(n, mode, loop_profile)
    db_executor().submit(db_profile.disable).result()
    print(f"profiled batch: {cpu:.2f} s CPU for {n} judgements (checks {mode})")
    for name, profile in (("event loop", loop_profile), ("database thread", db_profile)):
        path = f"{args.profile}.{name.split()[0]}"
        profile.dump_stats(path)
        print(f"\n===== {name} thread: {path}")
        stats = pstats.Stats(path)
        stats.sort_stats("cumulative").print_stats(70)
        stats.sort_stats("tottime").print_stats(40)


def count_queries(sides: Any, n: int, mode: str) -> tuple[int, dict[str, int]]:
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
        sides.engine(n, mode)
    finally:
        connection_created.disconnect(wrap)
        db_executor().submit(connections.close_all).result()
        connections.close_all()
    kinds: dict[str, int] = {}
    for sql in seen:
        word = sql.split(None, 1)[0].upper()
        kinds[word] = kinds.get(word, 0) + 1
    return len(seen), kinds
