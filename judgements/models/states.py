"""A kind's states and the moves between them, declared once beside its model, and the one
function that moves rows from state to state for every kind (judgements, webhook
deliveries, reviewers' emails).

A graph is a class: its states are a `TextChoices`, its initial state is where a row is
made, and each allowed change of state is a `Move` attribute naming the states it may
start from and those it may end in. The class is checked when it is made (every state
named is one of its choices, every stored state reachable from the initial one, a move
going somewhere), so a graph that cannot be run fails at import, not at the first
judgement. The model's column is made from the graph (`StateGraph.column`: its choices
and default), and docs/architecture.md draws each graph from `StateGraph.drawing`.

`transition` is the one writer of a state: a conditional UPDATE of the rows still in one
of the move's sources (so two workers can never both move a row: the loser's UPDATE
matches nothing), logged at INFO with the worker. tests/judgements/models/test_states.py
fails when a state is written any other way.
"""

import logging
from collections.abc import Iterable, Sequence
from typing import ClassVar, NamedTuple, TypeVar

from django.db import models

log = logging.getLogger(__name__)

M = TypeVar("M", bound=models.Model)


class Move:
    """One allowed change of state, named by the attribute it is declared as."""

    name: str
    graph: type["StateGraph"]

    def __init__(self, sources: Iterable[str], targets: Iterable[str]) -> None:
        self.sources = tuple(sources)
        self.targets = tuple(targets)

    def __set_name__(self, owner: type["StateGraph"], name: str) -> None:
        self.name = name
        self.graph = owner

    def __repr__(self) -> str:
        return f"<Move {self.name}: {'|'.join(self.sources)} -> {'|'.join(self.targets)}>"


class StateGraph:
    """The states of one kind and its moves, checked when the class is made."""

    states: ClassVar[type[models.TextChoices]]
    initial: ClassVar[str]
    # The model's column that holds the state.
    field: ClassVar[str] = "status"
    # Choices of `states` that are never stored as the state (a judgement's "held" is a
    # verdict in force, never a status): no move may reach them.
    unstored: ClassVar[tuple[str, ...]] = ()
    # Set when the class is made: every move by name, and the states no move leaves.
    moves: ClassVar[dict[str, Move]]
    final: ClassVar[frozenset[str]]

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls.moves = {name: v for name, v in vars(cls).items() if isinstance(v, Move)}
        stored = set(cls.states.values) - set(cls.unstored)
        if cls.initial not in stored:
            raise ValueError(f"{cls.__name__}: the initial state {cls.initial!r} is not stored")
        for move in cls.moves.values():
            if not move.sources or not move.targets:
                raise ValueError(f"{cls.__name__}.{move.name} must start and end somewhere")
            strangers = set(move.sources + move.targets) - stored
            if strangers:
                raise ValueError(f"{cls.__name__}.{move.name}: {sorted(strangers)} not states")
        unreachable = stored - cls.reachable()
        if unreachable:
            raise ValueError(f"{cls.__name__}: no move reaches {sorted(unreachable)}")
        cls.final = frozenset(
            state for state in stored if not any(state in m.sources for m in cls.moves.values())
        )

    @classmethod
    def reachable(cls) -> set[str]:
        """The states a row made in the initial one can come to."""
        found, frontier = {cls.initial}, [cls.initial]
        while frontier:
            state = frontier.pop()
            for move in cls.moves.values():
                if state in move.sources:
                    frontier += [target for target in move.targets if target not in found]
                    found.update(move.targets)
        return found

    @classmethod
    def column(cls, max_length: int = 16) -> "models.CharField[str, str]":
        """The model's state column: the graph's choices, made in its initial state."""
        return models.CharField(
            max_length=max_length, choices=cls.states.choices, default=cls.initial
        )

    @classmethod
    def drawing(cls) -> list[str]:
        """The graph as docs/architecture.md draws it: where a row is made and ends, then
        one line per move."""
        final = ", ".join(state for state in cls.states.values if state in cls.final)
        head = f"{cls.__name__} ({cls.field}): made {cls.initial}; final {final}"
        return [head] + [
            f"    {' | '.join(move.sources)} ──{name}──▶ {' | '.join(move.targets)}"
            for name, move in cls.moves.items()
        ]


class Told(NamedTuple):
    """What the log says of one row moved: which (`judgement 12`), the state it leaves,
    and what else is worth knowing (`in round 2, 3.1 s after its start`)."""

    subject: str
    source: str
    note: str = ""


def transition(
    rows: "models.QuerySet[M]",
    move: Move,
    target: str,
    *,
    worker: str,
    told: Sequence[Told],
    **changes: object,
) -> int:
    """The rows still in one of `move`'s sources -> `target` (one of its targets), with
    `changes` beside the state, in one UPDATE; each row `told` logged at INFO with the
    worker. Returns how many rows moved: 0 when another worker moved them first."""
    graph = move.graph
    if target not in move.targets:
        raise ValueError(f"{graph.__name__}.{move.name} does not end in '{target}'")
    if graph.field in changes:
        raise ValueError(f"{graph.__name__}: the move writes {graph.field}, not its caller")
    state = {graph.field: target}
    moved = rows.filter(**{f"{graph.field}__in": move.sources}).update(**state, **changes)
    if moved:
        for subject, source, note in told:
            log.info("%s: %s -> %s by worker %s%s", subject, source, target, worker or "-", note)
    return moved
