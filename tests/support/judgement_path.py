"""The path of one judgement through the code, as a reader walks it: every call of a
function of `judgements/` with the judgement's id, the judgement, one of its agents, its
deliberation or its lease among its arguments is a stop, every time it is called (a
round's third decision costs what its first did). Stops in a row in one file are one
visit; each time the walk leaves a file and comes back to it is a new entry into it.

The engine runs some work side by side (the agents of a round, the checks beside round
1, each an asyncio task): each such branch is walked on its own, from the file that
started it, so the figure does not depend on how the branches happen to interleave. A
call into `db_call`'s threads is part of its caller's branch (asgiref carries the
thread's context back to its caller). docs/architecture.md publishes the figures;
tests/packaging/test_judgement_path.py holds them to what this measures and
bench/judgement_path.py prints them.
"""

import contextvars
import os
import sys
import threading
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judgements.intake.case import Case

PACKAGE = Path(__file__).resolve().parents[2] / "judgements"
# A judgement id no round number, position or small count can be mistaken for.
JUDGEMENT_ID = 4242
PREFIX = str(PACKAGE) + os.sep
# Code that suspends and resumes (a coroutine, a generator) reports a "call" at each
# resume: only its first is a call.
RESUMABLE = 0x20 | 0x80 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR
# Keeping the lease is upkeep beside the path: the renewer wakes on a timer, and a round
# renews first only when the last renewal is older than half a lease. When either falls
# depends on the clock, not on the code, so the walk leaves them out. While one of these
# frames runs, the context it runs in is marked (db_call's threads run in a copy of it).
UPKEEP = {"HeldLease.keep", "HeldLease.renew"}
in_upkeep: contextvars.ContextVar[bool] = contextvars.ContextVar("in_upkeep", default=False)
# The file of the last stop on this branch of the walk (each asyncio task has its own).
last_file: contextvars.ContextVar[str | None] = contextvars.ContextVar("last_file", default=None)

# One stop: the file (relative to judgements/), the function, and whether the walk
# entered the file there (the stop before it on its branch was in another file).
Stop = tuple[str, str, bool]


def store_judgement(case: "Case") -> int:
    """The judgement of a validated case with its agents, under JUDGEMENT_ID."""
    from judgements.intake import rows
    from judgements.models import Agent

    judgement = rows.judgement_row(case)
    judgement.pk = JUDGEMENT_ID
    judgement.save(force_insert=True)
    Agent.objects.bulk_create(rows.agent_rows(judgement.pk, case.agents))
    return judgement.pk


def carries_id(value: Any, depth: int = 0) -> bool:
    """The value is the judgement's id or an object holding it (read from __dict__ only,
    so following the id never queries the database)."""
    if type(value) is int:
        return value == JUDGEMENT_ID
    attributes = getattr(value, "__dict__", None)
    if not isinstance(attributes, dict) or depth > 1:
        return False
    for name in ("judgement_id", "id", "pk"):
        if attributes.get(name) == JUDGEMENT_ID and (
            name == "judgement_id" or type(value).__name__ == "Judgement"
        ):
            return True
    judgement = attributes.get("judgement")
    return judgement is not None and carries_id(judgement, depth + 1)


class Walk:
    """The stops of one judgement's path, in the order they were called."""

    def __init__(self) -> None:
        self.stops: list[Stop] = []
        self.lock = threading.Lock()
        self.upkeep: dict[FrameType, contextvars.Token[bool]] = {}
        # The frames of coroutines and generators started so far (held, so that no new
        # frame can take the id of one that ended).
        self.started: set[FrameType] = set()

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        code = frame.f_code
        if not code.co_filename.startswith(PREFIX):
            return
        if code.co_qualname in UPKEEP:
            # A coroutine's frame is "called" at each resume and "returns" at each wait.
            if event == "call":
                self.upkeep[frame] = in_upkeep.set(True)
            elif event == "return" and frame in self.upkeep:
                in_upkeep.reset(self.upkeep.pop(frame))
            return
        if event != "call" or in_upkeep.get():
            return
        if code.co_flags & RESUMABLE:
            with self.lock:
                if frame in self.started:
                    return
                self.started.add(frame)
        named = code.co_argcount + code.co_kwonlyargcount
        arguments = [frame.f_locals.get(name) for name in code.co_varnames[:named]]
        arguments += list(frame.f_locals.get("args", ()) or ())
        arguments += list((frame.f_locals.get("kwargs", {}) or {}).values())
        if not any(self.carries(value) for value in arguments):
            return
        relative = os.path.relpath(code.co_filename, PACKAGE)
        entered = last_file.get() != relative
        last_file.set(relative)
        with self.lock:
            self.stops.append((relative, code.co_qualname, entered))

    def carries(self, value: Any) -> bool:
        """Whether an argument makes the call a stop: it carries the judgement."""
        return carries_id(value)

    def entries(self) -> Counter[str]:
        """How often the walk enters each file."""
        return Counter(path for path, _, entered in self.stops if entered)

    def report(self, figure: str, every_call: bool = False) -> None:
        """Print the walk as the benches do: every stop (an entry into its file marked
        `>`) when asked, the figure line, the stops, and how often each file is entered."""
        if every_call:
            for path, name, entered in self.stops:
                print(f"  {'>' if entered else ' '} {path}: {name}")
        print(f"figure: {figure}")
        print(f"stops: {len(self.stops)}")
        for path, times in self.entries().most_common():
            print(f"  {times}x {path}")

    def figures(self) -> dict[str, int]:
        """What docs/architecture.md publishes: every stop, every entry into a file, the
        files entered."""
        entries = self.entries()
        return {"stops": len(self.stops), "entries": entries.total(), "files": len(entries)}


async def follow(runner: Any, judgement_id: int) -> Walk:
    """Run the judgement to its end on `runner` (an EngineRunner), walking its path."""
    walk = Walk()
    threading.setprofile(walk.profile)
    sys.setprofile(walk.profile)
    try:
        assert await runner.run_judgement(judgement_id)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return walk
