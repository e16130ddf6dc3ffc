"""The path of one judgement through the code, as a reader walks it: every function of
`judgements/` called with the judgement's id, the judgement, one of its agents, its
deliberation or its lease among its arguments is a stop. Each function counts once, at its
first call (a reader reads a function once, however often it runs); stops in a row in one
file are one visit. docs/architecture.md states the limits; tests/packaging/
test_judgement_path.py holds the engine to them and bench/judgement_path.py prints the walk.
"""

import contextvars
import os
import sys
import threading
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

PACKAGE = Path(__file__).resolve().parents[2] / "judgements"
# A judgement id no round number, position or small count can be mistaken for.
JUDGEMENT_ID = 4242
# 9 since the lease is one module of its own (engine/lease.py).
MAX_FILES = 9
MAX_VISITS_PER_FILE = 2
PREFIX = str(PACKAGE) + os.sep
# Keeping the lease is upkeep beside the path: the renewer wakes on a timer, and a round
# renews first only when the last renewal is older than half a lease. When either falls
# depends on the clock, not on the code, so the walk leaves them out. While one of these
# frames runs, the context it runs in is marked (db_call's threads run in a copy of it).
UPKEEP = {"HeldLease.keep", "HeldLease.renew"}
in_upkeep: contextvars.ContextVar[bool] = contextvars.ContextVar("in_upkeep", default=False)


def store_judgement(case: dict) -> int:
    """The judgement of a validated case with its agents, under JUDGEMENT_ID."""
    from judgements.models import Agent, Judgement

    judgement = Judgement.from_case(case)
    judgement.pk = JUDGEMENT_ID
    judgement.save(force_insert=True)
    Agent.objects.bulk_create(Agent.rows_for(judgement.pk, case["agents"]))
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
    """The stops of one judgement's path, in the order of their first call."""

    def __init__(self) -> None:
        self.seen: set[Any] = set()
        self.stops: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self.upkeep: dict[FrameType, contextvars.Token[bool]] = {}

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
        if event != "call" or in_upkeep.get() or code in self.seen:
            return
        arguments = [frame.f_locals.get(name) for name in code.co_varnames[: code.co_argcount]]
        arguments += list(frame.f_locals.get("args", ()) or ())
        arguments += list((frame.f_locals.get("kwargs", {}) or {}).values())
        if not any(carries_id(value) for value in arguments):
            return
        with self.lock:
            if code in self.seen:
                return
            self.seen.add(code)
            relative = os.path.relpath(code.co_filename, PACKAGE)
            self.stops.append((relative, code.co_qualname))

    def visits(self) -> list[str]:
        """The files in the order the walk enters them."""
        entered: list[str] = []
        for path, _ in self.stops:
            if not entered or entered[-1] != path:
                entered.append(path)
        return entered

    def entries(self) -> Counter[str]:
        return Counter(self.visits())


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
