"""How async code reaches the database: `db_call`, the one helper that runs ORM code off
the event loop, for the engine, the API, the live page's websocket and commands alike.

The engine's calls run in a small thread pool of their own (one connection per thread,
so judgements do not queue behind one another's queries) and ride out a database that is
briefly unreachable instead of dying mid-judgement. A request's calls
(`for_request=True`) run on the loop's default threads with Django's per-request
connection handling, and fail at once: a client is told now rather than kept waiting.
"""

import functools
import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from asgiref.sync import sync_to_async
from channels.db import DatabaseSyncToAsync
from django.db import InterfaceError, OperationalError, connections
from tenacity import (
    AsyncRetrying,
    retry_if_exception_type,
    stop_after_delay,
    wait_exponential_jitter,
)

from judgements.models.magi_settings import magi_settings

log = logging.getLogger(__name__)

DATABASE_DOWN = (OperationalError, InterfaceError)

P = ParamSpec("P")
R = TypeVar("R")


@functools.cache
def db_executor() -> ThreadPoolExecutor:
    """The process's engine threads: one pool, whatever event loop asks (cached: made
    once, on first use, when the settings are read)."""
    return ThreadPoolExecutor(
        max_workers=max(1, magi_settings.MAGI_DB_THREADS), thread_name_prefix="magi-db"
    )


def _dropping_dead_connections(func: Callable[P, R]) -> Callable[P, R]:
    @functools.wraps(func)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except DATABASE_DOWN:
            # This thread's connection may be dead (the server restarted): drop it so the
            # next try connects afresh.
            connections.close_all()
            raise

    return guarded


def db_call(
    func: Callable[P, R], *, for_request: bool = False, executor: ThreadPoolExecutor | None = None
) -> Callable[P, Awaitable[R]]:
    """Make a synchronous ORM function awaitable: retried while the database is away; or
    (`for_request`) as a request's, with stale connections closed around it; or on an
    `executor` of its own (work that also waits on the network, such as webhook
    deliveries, must not hold the engine's threads), not retried: its caller tries again
    on its next pass.

    A request's calls do not use plain sync_to_async, which runs every such call of the
    process on one thread: each read would queue behind every write in flight (a burst of
    creations held /healthz and every read for seconds); the database, not that thread,
    serialises what must be."""
    if for_request:
        request_call: Callable[P, Awaitable[R]] = DatabaseSyncToAsync(func, thread_sensitive=False)
        return request_call
    if executor is not None:
        return sync_to_async(
            _dropping_dead_connections(func), thread_sensitive=False, executor=executor
        )
    guarded = _dropping_dead_connections(func)
    # Made on first use, when the settings say how many threads (db_executor), then kept:
    # building it again for every call was a measurable part of the engine's CPU.
    made: list[Callable[P, Awaitable[R]]] = []

    @functools.wraps(func)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        if not made:
            made.append(sync_to_async(guarded, thread_sensitive=False, executor=db_executor()))
        run = made[0]
        retrying = AsyncRetrying(
            retry=retry_if_exception_type(DATABASE_DOWN),
            stop=stop_after_delay(magi_settings.MAGI_DB_RETRY_SECONDS),
            wait=wait_exponential_jitter(multiplier=0.05, jitter=0.1, max=1.0),
            before_sleep=lambda state: log.warning(
                "database call %s failed (%s); retrying",
                func.__name__,
                state.outcome.exception() if state.outcome else "?",
            ),
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                return await run(*args, **kwargs)
        raise AssertionError("unreachable: tenacity either returns or re-raises")

    return wrapper
