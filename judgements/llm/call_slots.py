"""Room for a person's work beside evaluation runs: slots that serve people first.

An evaluation run queues its whole suite at once. Served in arrival order, a judgement a
person typed a moment later waits behind every call of the run (on a local model with one
call at a time, that was five minutes in round 1). So MAGI gives interactive work a
priority, in two places, per provider:

- each provider's call slots (`PrioritySlots`): when a slot frees, a waiting interactive
  call takes it before any waiting evaluation call, and evaluation calls hold at most
  `batch_share(size)` of the slots, so a person's call never waits for more than the
  calls already in flight;
- a worker's judgement capacity (judgements/engine/runner.py) is shared the same way.

A priority, not a fair share: people are few and their judgements short, and a run
waits a few calls longer for each; a fair share would make a person wait behind half
the run's calls. The cost is that a flood of API judgements (counted as interactive)
can hold a run back; the rate limits (judgements/intake/limits.py) bound that flood.

No Django here.
"""

import asyncio
import contextlib
from collections import deque


def batch_share(size: int) -> int:
    """How many of `size` slots evaluation work may hold at once: all but a quarter (at
    least one kept free), and all of a single slot, or a run could never start."""
    if size <= 1:
        return size
    return size - max(1, size // 4)


class PrioritySlots:
    """At most `size` holders; interactive waiters are served before batch waiters, each
    kind in arrival order, and batch holders never exceed `batch_share(size)`."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.batch_limit = batch_share(size)
        self.held = 0
        self.batch_held = 0
        self._waiting: dict[bool, deque[asyncio.Future[None]]] = {False: deque(), True: deque()}
        self._changed = asyncio.Event()

    def __str__(self) -> str:
        return f"{self.held}/{self.size} slots held ({self.batch_held} by evaluation runs)"

    def waiting(self, batch: bool) -> int:
        return sum(1 for future in self._waiting[batch] if not future.done())

    def _room(self, batch: bool) -> bool:
        if self.held >= self.size:
            return False
        return not batch or self.batch_held < self.batch_limit

    def _take(self, batch: bool) -> None:
        self.held += 1
        self.batch_held += batch
        self._announce()

    def _announce(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def changed(self) -> None:
        """Return at the next change of who holds or waits: lets a watcher (or a test)
        wait for a state without polling."""
        await self._changed.wait()

    def hold(self, *, batch: bool) -> "Hold":
        """`async with slots.hold(batch=...)`: one slot for the block. The object may be
        kept and entered again, by several tasks at once, like a semaphore."""
        return Hold(self, batch)

    async def _acquire(self, batch: bool) -> None:
        # Nobody of higher or equal standing waiting ahead: take a free slot at once.
        ahead = self.waiting(False) + (self.waiting(True) if batch else 0)
        if not ahead and self._room(batch):
            self._take(batch)
            return
        future = asyncio.get_running_loop().create_future()
        self._waiting[batch].append(future)
        self._announce()
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                # Granted in the same moment as cancelled: hand the slot on.
                self._release(batch)
            raise
        finally:
            with contextlib.suppress(ValueError):
                self._waiting[batch].remove(future)

    def _release(self, batch: bool) -> None:
        self.held -= 1
        self.batch_held -= batch
        self._announce()
        self._grant()

    def _grant(self) -> None:
        for batch in (False, True):
            queue = self._waiting[batch]
            while queue and self._room(batch):
                future = queue.popleft()
                if future.done():  # its waiter was cancelled
                    continue
                self._take(batch)
                future.set_result(None)


class Hold:
    """A reusable `async with` over PrioritySlots: no state of its own beyond its kind."""

    def __init__(self, slots: PrioritySlots, batch: bool) -> None:
        self.slots, self.batch = slots, batch

    async def __aenter__(self) -> None:
        await self.slots._acquire(self.batch)

    async def __aexit__(self, *exc_info: object) -> None:
        self.slots._release(self.batch)
