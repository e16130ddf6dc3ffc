"""A kind's states and the moves between them, declared once beside its model, and the one
function that moves rows from state to state for every kind (judgements, webhook
deliveries, reviewers' emails, Slack messages).

A graph is a class: its states are a `TextChoices`, its initial state is where a row is
made, and each allowed change of state is a `Move` attribute naming the states it may
start from and those it may end in. The class is checked when it is made (every state
named is one of its choices, every stored state reachable from the initial one, a move
going somewhere), so a graph that cannot be run fails at import, not at the first
judgement. docs/architecture.md draws each graph from `StateGraph.drawing`.

The model's column is made from the graph (`StateGraph.column`): a `StateField`, which
holds its graph, so the pair (model, graph) is read off the model and never written
twice. `transition` is the one writer of a state: a conditional UPDATE of the rows still
in one of the move's sources (so two workers can never both move a row: the loser's
UPDATE matches nothing), logged at INFO with the worker, refused for rows whose column is
bound to another graph. Every other way of writing the column fails when it runs:

- a row is made in its graph's initial state (create, save, bulk_create: the field's
  `pre_save`), and `save()` of a row already made never writes its state (name the
  fields it changes: `save(update_fields=[...])`);
- `update(status=...)` and `bulk_update(..., ["status"])` of a stateful kind's QuerySet
  (`StateQuerySet`) are refused unless `transition` sends them;
- raw SQL has no hook in the ORM: tests/conftest.py watches every statement of the test
  suite and fails an UPDATE of a state column that `transition` did not send.

Loading rows (fixtures, backups: `loaddata` saves raw) writes what was stored, in any
state. tests/judgements/models/test_states.py attacks each way.
"""

import functools
import logging
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
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
    def column(cls, max_length: int = 16) -> "StateField":
        """The model's state column: the graph's choices, made in its initial state, bound
        to the graph."""
        field = StateField(max_length=max_length, choices=cls.states.choices, default=cls.initial)
        field.graph = cls
        return field

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


# On while `transition` sends its UPDATE: the one time a stateful QuerySet writes a state.
_moving: ContextVar[bool] = ContextVar("moving a state", default=False)


def sending_a_move() -> bool:
    """Whether `transition` is sending its UPDATE in this context: the one sign, read by
    `StateQuerySet.update` and by the test suite's watch on raw SQL."""
    return _moving.get()


@contextmanager
def _sending_a_move() -> Iterator[None]:
    token = _moving.set(True)
    try:
        yield
    finally:
        _moving.reset(token)


class StateField(models.CharField[str, str]):
    """A kind's state column, bound to its graph. The database sees a CharField (the
    migrations too: `deconstruct` leaves the graph out); Python sees the graph, and a
    save that would write the state past it is refused."""

    # Set by `StateGraph.column`, the one maker of the field (and kept by `clone`).
    graph: type[StateGraph]

    def deconstruct(self) -> tuple[str, str, Sequence[object], dict[str, object]]:
        name, _, args, kwargs = super().deconstruct()
        return name, "django.db.models.CharField", args, kwargs

    def clone(self) -> "StateField":
        """The field made again (the migrations' state copies fields so): its graph's
        column, as the model made it, still bound."""
        return self.graph.column(self.max_length or 16)

    def pre_save(self, model_instance: models.Model, add: bool) -> str:
        """The value an INSERT or a save's UPDATE writes: a row is made in its initial
        state, and a row already made moves only through `transition`."""
        value = str(super().pre_save(model_instance, add))
        kind, initial = type(model_instance).__name__, str(self.graph.initial)
        if add and value != initial:
            raise ValueError(
                f"{kind} is made {initial!r}, not {value!r}: its "
                f"{self.graph.__name__} moves it on through transition()"
            )
        if not add:
            raise ValueError(
                f"{kind}.save() would write {self.attname}: name the fields it changes "
                f"(save(update_fields=[...])); {self.graph.__name__} moves it through transition()"
            )
        return value


@functools.cache
def graph_of(model: type[models.Model]) -> type[StateGraph] | None:
    """The graph a model's state column is bound to; None for a kind without states."""
    for field in model._meta.concrete_fields:
        if isinstance(field, StateField):
            return field.graph
    return None


class StateQuerySet(models.QuerySet[M]):
    """The QuerySet of a kind with states: `update` (and so `bulk_update`, which sends
    one) refuses its state column unless `transition` sends it."""

    def update(self, **kwargs: object) -> int:
        graph = graph_of(self.model)
        if graph is not None and graph.field in kwargs and not sending_a_move():
            raise ValueError(
                f"{self.model.__name__}.{graph.field} is written by transition() along "
                f"{graph.__name__}, not by update() or bulk_update()"
            )
        return super().update(**kwargs)


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
    if graph_of(rows.model) is not graph:
        raise ValueError(
            f"{rows.model.__name__}'s {graph.field} is not bound to {graph.__name__} "
            f"({move.name} is its move)"
        )
    if target not in move.targets:
        raise ValueError(f"{graph.__name__}.{move.name} does not end in '{target}'")
    if graph.field in changes:
        raise ValueError(f"{graph.__name__}: the move writes {graph.field}, not its caller")
    state = {graph.field: target}
    with _sending_a_move():
        moved = rows.filter(**{f"{graph.field}__in": move.sources}).update(**state, **changes)
    if moved:
        for subject, source, note in told:
            log.info("%s: %s -> %s by worker %s%s", subject, source, target, worker or "-", note)
    return moved
