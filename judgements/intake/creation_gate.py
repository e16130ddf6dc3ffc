"""The creation gate: the creations (the API's and the MCP tools') a process validates
and stores at once.

The rest wait their turn on the event loop, costing nothing, instead of filling the
thread pool that reads need too: with all its threads busy validating a burst, a read (and
the loop itself, through the GIL) waited half a second (bench/abuse.py). Per event loop,
as asyncio primitives belong to one; weakly keyed, so a closed loop's goes with it.
"""

import asyncio
import contextlib
import weakref

from django.http import HttpRequest

CREATIONS_AT_ONCE = 2
_slots: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]" = (
    weakref.WeakKeyDictionary()
)


def creation_slot() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    slots = _slots.get(loop)
    if slots is None:
        slots = _slots[loop] = asyncio.Semaphore(CREATIONS_AT_ONCE)
    return slots


def creation_gate(request: HttpRequest) -> contextlib.AbstractAsyncContextManager[None]:
    """A POST that creates waits for a creation slot before its token is looked up."""
    return creation_slot() if request.method == "POST" else contextlib.nullcontext()
