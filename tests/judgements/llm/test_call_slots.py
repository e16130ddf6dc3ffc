"""Call slots that serve people first (judgements/llm/call_slots.py): order, share and cancels."""

import asyncio

import pytest

from judgements.llm.call_slots import PrioritySlots, batch_share


@pytest.mark.parametrize(("size", "share"), [(1, 1), (2, 1), (3, 2), (4, 3), (8, 6), (200, 150)])
def test_it_leaves_a_quarter_of_the_slots_to_people(size, share):
    assert batch_share(size) == share


async def holder(slots: PrioritySlots, name: str, batch: bool, order: list, release):
    async with slots.hold(batch=batch):
        order.append(name)
        await release.wait()


async def settle() -> None:
    """Let every task that can run take its step (no timing: just turns of the loop)."""
    for _ in range(5):
        await asyncio.sleep(0)


async def test_it_serves_a_waiting_person_before_a_run_that_waited_longer():
    slots = PrioritySlots(1)
    order: list[str] = []
    gates = {name: asyncio.Event() for name in ("run-1", "run-2", "run-3", "person")}
    tasks = [
        asyncio.create_task(holder(slots, "run-1", True, order, gates["run-1"])),
        asyncio.create_task(holder(slots, "run-2", True, order, gates["run-2"])),
        asyncio.create_task(holder(slots, "run-3", True, order, gates["run-3"])),
    ]
    await settle()
    person = asyncio.create_task(holder(slots, "person", False, order, gates["person"]))
    await settle()
    assert order == ["run-1"]  # the call in flight keeps its slot
    for name in ("run-1", "person", "run-2", "run-3"):
        gates[name].set()
        await settle()
    await asyncio.gather(*tasks, person)
    assert order == ["run-1", "person", "run-2", "run-3"]
    assert (slots.held, slots.batch_held) == (0, 0)


async def test_runs_hold_at_most_their_share_so_a_person_starts_at_once():
    slots = PrioritySlots(4)
    order: list[str] = []
    release = asyncio.Event()
    runs = [asyncio.create_task(holder(slots, f"run-{n}", True, order, release)) for n in range(5)]
    await settle()
    assert order == ["run-0", "run-1", "run-2"]
    assert slots.waiting(True) == 2
    person = asyncio.create_task(holder(slots, "person", False, order, release))
    await settle()
    assert order[-1] == "person"  # no run call had to end first
    release.set()
    await asyncio.gather(*runs, person)
    assert sorted(order) == sorted(["person", *(f"run-{n}" for n in range(5))])
    assert (slots.held, slots.batch_held) == (0, 0)


async def test_a_cancelled_waiter_gives_up_its_place_and_leaks_no_slot():
    slots = PrioritySlots(1)
    order: list[str] = []
    release = asyncio.Event()
    first = asyncio.create_task(holder(slots, "first", False, order, release))
    await settle()
    cancelled = asyncio.create_task(holder(slots, "cancelled", False, order, release))
    after = asyncio.create_task(holder(slots, "after", True, order, release))
    await settle()
    cancelled.cancel()
    await settle()
    release.set()
    await asyncio.gather(first, after)
    assert cancelled.cancelled()
    assert order == ["first", "after"]
    assert (slots.held, slots.batch_held, slots.waiting(False), slots.waiting(True)) == (
        0,
        0,
        0,
        0,
    )


async def test_a_waiter_cancelled_as_it_is_granted_hands_the_slot_on():
    slots = PrioritySlots(1)
    order: list[str] = []
    release = asyncio.Event()
    first = slots.hold(batch=True)
    await first.__aenter__()
    granted = asyncio.create_task(holder(slots, "granted", True, order, release))
    await settle()
    await first.__aexit__(None, None, None)  # hands the slot to `granted`...
    granted.cancel()  # ...which is cancelled before it runs again
    await asyncio.gather(granted, return_exceptions=True)
    assert granted.cancelled() and order == []
    assert (slots.held, slots.batch_held) == (0, 0)
    release.set()
    await holder(slots, "next", False, order, release)
    assert order == ["next"]


async def test_one_hold_serves_several_tasks_like_a_semaphore():
    """Callers may keep the object clients.slot() gives and enter it from many tasks."""
    slots = PrioritySlots(1)
    hold = slots.hold(batch=False)
    order: list[int] = []

    async def use(number: int) -> None:
        async with hold:
            order.append(number)
            await settle()

    await asyncio.gather(*(use(n) for n in range(3)))
    assert sorted(order) == [0, 1, 2] and slots.held == 0
