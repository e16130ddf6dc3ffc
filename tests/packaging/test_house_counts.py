"""The house typed through (issues 57 and 71), held to what it reached: no import cycle (an
import behind TYPE_CHECKING or inside a function counts), none between folders either
(the house's drawing has no arrow running back up), and no more of each loose type than
the caps below, place by place. A change that adds one fails here: give the value a type
that says what it holds (a TypedDict, a dataclass, a pydantic model, core/json_values.py's
JsonValue), or lower a cap when the count goes down. bench/house_counts.py prints the
counts, `mypy --strict` beside them."""

import ast
import re

from tests.support import house_counts

# Each cap is the count on the day it was set (issue 71), so a count can only go down.
# What each stands for, and why it is not yet 0:
CAPS = {
    # The app and the client, held to `mypy --strict`.
    "judgements and the client": {
        # A framework's own signature (`**kwargs` handed on to Django, an ASGI scope). The
        # registry of kinds holds no `Any` since it hands out each kind as its untyped
        # base (api/resources.py `Kind`), its own types kept inside its class; 37 until
        # then and until configuration/live_state.py's kinds said what their state
        # functions take.
        "Any": 34,
        "dict[str, Any]": 7,
        # Where those aliases are used: the ASGI scope's three in web/security.py, the
        # evidence pack's `Obj` in magi_client/packs.py.
        "Any by alias": 29,
        # Values carried as `dict/Mapping[str, object]` where a shape is known: issue 71
        # item 1 names them one by one. 121 until each kind's audited state was named
        # (configuration/live_state.py, people.py, teams.py, suite_config.py,
        # slack_config.py, models/panels.py, models/budgets.py) and the MCP tools read a
        # judgement as JsonObject; 99 until what Slack sends about a click was read as
        # pydantic models (outcome/slack_payloads.py); 93 until budget forms, receipt checks,
        # a check's and a saved panel's agents (StoredAgent), the client's plan bodies
        # (batch_bodies.py), the witness's state and evidence packs were named. Left:
        # api/schemas.py's evidence pack parts (its OpenAPI says "object" for each), the
        # client's canonical.py and http.py (any signed document, any JSON body), ...
        "object bags": 68,
        # Parameters typed `object`: a value checked before it is trusted (pydantic's
        # validators in intake/schemas.py, configuration/saving.py, the client's receipt
        # checks), teams.record's before and after (any kind's audited state), and the
        # API's `**sent: object` (api/resource_routes.py): ninja calls a view with keyword
        # arguments named by kind (`panel_id`), read by `given`. 101 until the registry
        # parsed what was sent inside each kind and live_state.py read the audit rows
        # back as JsonValue; 90 until the client's receipt and pack checks took JsonValue.
        "object parameters": 81,
        "type: ignore": 4,
    },
    # The site: the settings kit reads the environment as it comes (issue 71 item 4
    # types it), and asgi.py's scope is ASGI's.
    "magi_site": {
        "Any": 16,
        "dict[str, Any]": 1,
        "Any by alias": 6,
        "object bags": 1,
        "object parameters": 0,
        "type: ignore": 0,
    },
    # The benches: JSON records as they are read and written, checked only in their bodies
    # (`check_untyped_defs`), not annotated to the letter.
    "bench": {
        "Any": 40,
        "dict[str, Any]": 9,
        "Any by alias": 9,
        "object bags": 1,
        "object parameters": 0,
        "type: ignore": 1,
    },
}


def test_no_module_imports_itself_round_a_circle():
    assert house_counts.cycles(house_counts.import_graph()) == []


def test_no_folder_imports_one_that_imports_it_back():
    """Folded to folders (an area of the app, the site, the client), the imports make no
    loop: every arrow of the drawing points down, magi_site → the areas → magi_client."""
    assert house_counts.cycles(house_counts.folded(house_counts.import_graph())) == []


def test_the_architecture_page_draws_the_house_as_it_is_with_no_arrow_back_up():
    graph = house_counts.folded(house_counts.import_graph())
    assert house_counts.back_arrows(graph) == []
    page = (house_counts.REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    (drawn,) = re.findall(r"```text\n(magi_site .*?)```", page, re.S)
    assert drawn.splitlines() == house_counts.drawing(graph), (
        "copy what bench/house_counts.py --drawing prints into docs/architecture.md"
    )


def test_an_arrow_to_a_folder_drawn_above_runs_back_up():
    graph = {"magi_site": {"judgements.llm"}, "judgements.llm": {"magi_site", "judgements.core"}}
    assert house_counts.back_arrows(graph) == ["judgements.llm → magi_site"]
    assert house_counts.drawing(graph)[0].split() == ["magi_site", "→", "llm"]


def test_a_folder_loop_is_found_where_modules_make_none():
    # llm/ reading the site's model settings while the site imports llm/ (issue 71): no
    # module imports itself round a circle, but the folders do.
    graph = {
        "magi_site.settings": {"judgements.llm.providers"},
        "judgements.llm.providers": {"magi_site.model_settings"},
        "magi_site.model_settings": set(),
        "judgements.audit.log": {"magi_client.merkle"},
        "magi_client.merkle": set(),
    }
    assert house_counts.cycles(graph) == []
    assert house_counts.cycles(house_counts.folded(graph)) == [["judgements.llm", "magi_site"]]


def test_the_counts_stay_under_their_caps():
    for place, caps in CAPS.items():
        found = house_counts.counts(place)
        assert {name: min(found[name], cap) for name, cap in caps.items()} == found, place


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


def test_the_counts_see_object_bags_and_object_parameters():
    tree = ast.parse(
        "def f(x: object, *rest: object, y: Mapping[str, object], **sent: object) -> None: ...\n"
        "z: dict[str, object] = {}\n"
        "w: 'list[typing.Mapping[str, object]]' = []\n"
        "v: dict[str, int] = {}\n"
        "u: Mapping[int, object] = {}\n"
    )
    said = list(house_counts.annotations(tree))
    assert sum(map(house_counts.object_bags, said)) == 3
    assert house_counts.object_parameters(tree) == 3


def test_an_alias_of_any_or_a_bag_counts_where_it_is_used():
    defining = ast.parse(
        "Scope = dict[str, Any]\nFields = Mapping[str, object]\nRows = TypeVar('Rows')\n"
    )
    aliases = house_counts.aliases_in(defining, "judgements.web.security")
    assert aliases == {
        "judgements.web.security.Scope": "Any by alias",
        "judgements.web.security.Fields": "object bags",
    }
    using = ast.parse(
        "from judgements.web import security\n"
        "from judgements.web.security import Fields as Given\n"
        "def f(scope: security.Scope, given: Given, other: 'list[security.Scope]') -> int: ...\n"
    )
    module = "judgements.web.pages"
    names = house_counts.local_names(using, module, is_package=False)
    uses = [
        house_counts.alias_uses(a, module, names, aliases) for a in house_counts.annotations(using)
    ]
    assert uses == [{"Any by alias"}, {"object bags"}, {"Any by alias"}, set()]
