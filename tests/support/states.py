"""The suite's view of the state graphs (judgements/models/states.py): every (model,
graph) pair read off the models' state columns, the watch that fails any UPDATE of a
state column not sent by `transition` (installed on every connection by tests/conftest.py:
raw SQL has no other hook), and `bring`, how a test puts rows in a state: along their
graph's moves, through `transition`, as the code would."""

import re
import sys
from collections import deque
from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar

from django.apps import apps
from django.db import connection, models

from judgements.models.states import Move, StateGraph, graph_of, sending_a_move, transition

M = TypeVar("M", bound=models.Model)


class StateWrittenPastItsGraph(AssertionError):
    """An UPDATE wrote a state column and `transition` did not send it."""


# Every statement refused by the watch, kept in case the code that ran it swallowed the
# error (a worker logging what failed): tests/conftest.py fails the test at its end.
BYPASSES: list[str] = []


def stateful_models() -> dict[type[models.Model], type[StateGraph]]:
    """Each model with a state column and the graph the column is bound to, by walking
    the models' fields: a new kind is found, never listed by hand."""
    found = {model: graph_of(model) for model in apps.get_models()}
    return {model: graph for model, graph in found.items() if graph is not None}


@cache
def state_column_updates() -> re.Pattern[str]:
    """An UPDATE of a stateful table that sets its state column (quoted or not; its name
    in a condition or after WHERE is not a write)."""
    tables = "|".join(
        rf"(?:{re.escape(model._meta.db_table)}\W+SET\s(?:(?:(?!\bWHERE\b).)*?,)?"
        rf"\s*[\"`]?{graph.field}[\"`]?\s*=)"
        for model, graph in stateful_models().items()
    )
    return re.compile(rf"\s*UPDATE\W+(?:{tables})", re.I | re.S)


def writes_a_state(sql: str) -> bool:
    return sql.lstrip()[:6].upper() == "UPDATE" and bool(state_column_updates().match(sql))


def sent_by_transition_or_a_migration() -> bool:
    """Whether `transition` is sending it (the sign `StateQuerySet.update` reads too), or
    a migration is (a data migration moves historical rows, whose models are the
    migration's own): that one is told by the stack."""
    if sending_a_move():
        return True
    frame = sys._getframe()
    while frame is not None:
        if "/migrations/" in frame.f_code.co_filename:
            return True
        frame = frame.f_back  # type: ignore[assignment]  # None ends the walk
    return False


def refuse_states_written_past_their_graphs(
    execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any
) -> Any:
    """A connection's execute wrapper: an UPDATE of a state column not sent by
    `transition` is refused before it reaches the database."""
    if writes_a_state(sql) and not sent_by_transition_or_a_migration():
        BYPASSES.append(sql)
        raise StateWrittenPastItsGraph(f"a state written past its graph: {sql}")
    return execute(sql, params, many, context)


def path_to(graph: type[StateGraph], source: str, target: str) -> list[tuple[Move, str]]:
    """The fewest moves from `source` to `target`, the first declared move first."""
    ways: dict[str, list[tuple[Move, str]]] = {source: []}
    frontier = deque([source])
    while frontier:
        state = frontier.popleft()
        if state == target:
            return ways[state]
        for move in graph.moves.values():
            for reached in move.targets if state in move.sources else ():
                if reached not in ways:
                    ways[reached] = [*ways[state], (move, reached)]
                    frontier.append(reached)
    raise ValueError(f"{graph.__name__}: no way from {source!r} to {target!r}")


def bring(rows: "models.QuerySet[M]", target: str, **changes: object) -> None:
    """Move `rows` (all in one state) to `target` along their graph's moves, through
    `transition`, writing `changes` with the last move (or alone, already there)."""
    graph = graph_of(rows.model)
    assert graph is not None, f"{rows.model.__name__} has no states"
    pks = list(rows.values_list("pk", flat=True))
    (source,) = set(rows.values_list(graph.field, flat=True))
    steps = path_to(graph, source, target)
    if not steps:
        rows.update(**changes)
    for number, (move, reached) in enumerate(steps, start=1):
        last = changes if number == len(steps) else {}
        moved = transition(
            rows.model._default_manager.filter(pk__in=pks), move, reached,
            worker="test", told=[], **last,
        )  # fmt: skip
        assert moved == len(pks), f"{move!r}: {moved} of {len(pks)} rows moved"


def tamper(rows: "models.QuerySet[M]", state: str) -> None:
    """Someone editing the database by hand, outside MAGI (the audit log's attacker):
    the state column written by raw SQL with the watch off for that one statement."""
    graph = graph_of(rows.model)
    assert graph is not None, f"{rows.model.__name__} has no states"
    pks = list(rows.values_list("pk", flat=True))
    table, quote = rows.model._meta.db_table, connection.ops.quote_name
    watched = connection.execute_wrappers
    connection.execute_wrappers = [
        w for w in watched if w is not refuse_states_written_past_their_graphs
    ]
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {quote(table)} SET {quote(graph.field)} = %s "
                f"WHERE {quote(rows.model._meta.pk.column)} IN "
                f"({', '.join(['%s'] * len(pks))})",
                [state, *pks],
            )
    finally:
        connection.execute_wrappers = watched
