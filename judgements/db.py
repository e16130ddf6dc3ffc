"""How the engine reaches the database.

Every query the engine makes goes through `db_call`: it runs the ORM in a small thread pool
(one connection per thread, so judgements do not queue behind one another's queries) and
rides out a database that is briefly unreachable instead of dying mid-judgement.
"""

import functools
import logging
import threading
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import InterfaceError, OperationalError, connections
from tenacity import (
    AsyncRetrying,
    retry_if_exception_type,
    stop_after_delay,
    wait_exponential_jitter,
)

log = logging.getLogger(__name__)

DATABASE_DOWN = (OperationalError, InterfaceError)

_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def db_executor() -> ThreadPoolExecutor:
    """The process's engine threads: one pool, whatever event loop asks."""
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(
                max_workers=max(1, settings.MAGI_DB_THREADS), thread_name_prefix="magi-db"
            )
        return _executor


def _dropping_dead_connections(func):
    @functools.wraps(func)
    def guarded(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except DATABASE_DOWN:
            # This thread's connection may be dead (the server restarted): drop it so the
            # next try connects afresh.
            connections.close_all()
            raise

    return guarded


def db_call(func):
    """Make a synchronous ORM function awaitable, retried while the database is away."""
    guarded = _dropping_dead_connections(func)

    @functools.wraps(func)
    async def wrapper(*args, **kwargs):
        run = sync_to_async(guarded, thread_sensitive=False, executor=db_executor())
        retrying = AsyncRetrying(
            retry=retry_if_exception_type(DATABASE_DOWN),
            stop=stop_after_delay(settings.MAGI_DB_RETRY_SECONDS),
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
