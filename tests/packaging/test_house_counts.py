"""The house typed through (issue 57), held to what it reached: no import cycle (an import
behind TYPE_CHECKING or inside a function counts), and no more annotations naming `Any`,
`dict[str, Any]` or type: ignores in judgements/ and the client than the caps below. A
change that adds one fails here: give the value a type that says what it holds
(a TypedDict, a pydantic model, core/json_values.py's JsonValue), or lower a cap when the count
goes down. bench/house_counts.py prints the counts, `mypy --strict` beside them."""

import ast

from tests.support import house_counts

CAPS = {"Any": 37, "dict[str, Any]": 7, "type: ignore": 4}


def test_no_module_imports_itself_round_a_circle():
    assert house_counts.cycles(house_counts.import_graph()) == []


def test_the_counts_stay_under_their_caps():
    found = house_counts.counts()
    assert {name: min(found[name], cap) for name, cap in CAPS.items()} == found, found


def test_the_graph_follows_every_kind_of_import():
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "from . import rules\n"
        "if TYPE_CHECKING:\n"
        "    from judgements.engine.deliberation import Deliberation\n"
        "def f():\n"
        "    import judgements.models.panels\n"
    )
    found = set(house_counts.imports(tree, "judgements.core.checks", is_package=False))
    assert {
        "judgements.core.rules",
        "judgements.engine.deliberation.Deliberation",
        "judgements.models.panels",
    } <= found


def test_a_circle_is_found_however_long():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert house_counts.cycles(graph) == [["a", "b", "c"]]
    assert house_counts.cycles({"a": {"b"}, "b": set()}) == []


def test_the_counts_see_any_where_an_annotation_says_it():
    tree = ast.parse(
        "Scope = dict[str, Any]\n"
        "def f(x: Any, y: 'dict[str, Any]') -> dict[str, Any]: ...\n"
        "z: list[typing.Any] = []\n"
        "w: int = 0\n"
        "Anything = Any\n"
        "Loose = typing.Any | None\n"
        "limit = 5\n"
        "kinds: dict[str, 'Resource[Any, Any]'] = {}\n"
        "shapes: list['dict[str, Any]'] = []\n"
        "mode: Literal['a b'] = 'a b'\n"
    )
    said = list(house_counts.annotations(tree))
    # Scope, Anything, Loose; x, y, f's return, z, w; kinds, shapes (a string inside), mode.
    found = [house_counts.names_any(a) for a in said]
    assert found == [True] * 7 + [False, True, True, False]
    assert sum(map(house_counts.dicts_of_any, said)) == 4
    assert house_counts.type_ignores("x = 1  # type: ignore[misc]  # why\n# type: int\n") == 1
