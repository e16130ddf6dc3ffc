"""The sizes (issues 51, 57 and 71): every module of judgements/, magi_site/, bench/ and
the client (clients/magi-client/src/magi_client/) at most 400 lines and every function
at most 60, so each module can be read as one job and each function as one step.
Migrations are written by Django and left out. A module or function longer than that is
named below with why it is one job all the same, held to its length on the day it was
named (it may only shrink), and leaves the list once it is back under the rule."""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLIENT = REPO / "clients" / "magi-client" / "src" / "magi_client"
AREAS = (REPO / "judgements", REPO / "magi_site", REPO / "bench", CLIENT)
MODULE_MAX_LINES = 400
FUNCTION_MAX_LINES = 60
# Long, and one job all the same: each held to its length when it was named, and why.
LONG_MODULES = {
    # Reading a configuration directory into what the API takes: the file format's
    # shapes (the TypedDicts plan.py, server_state.py and writing.py import from here,
    # about 170 lines) and the one Reader that checks every file against its schema and
    # what no file alone can say, each problem with its file, line and field.
    "clients/magi-client/src/magi_client/directory.py": 617,
    # A plan of changes from a directory and a server's state: one short function per
    # kind (teams, scopes, suites, budgets, Slack), all of one pattern, and the plan's
    # JSON shapes beside them (the bodies it sends are batch_bodies.py's).
    "clients/magi-client/src/magi_client/plan.py": 437,
    # The panel-quality bench (issue 54): every column's judgements, the plain call beside
    # them, resumable runs and the report, one command run by hand; its `main` wires the
    # options of each mode (below). The plain calls' wordings live in plain_wordings.py.
    "bench/panel_quality.py": 1132,
    # The one module that imports the openai SDK (test_house_rules.py), so everything that
    # touches it lives here: the clients and their call slots, the SDK's errors told apart
    # and retried, the SDK imported beside a local server's start, a verdict's and a
    # check's request. What is sent and how a reply is read is completions.py's.
    "judgements/llm/calls.py": 425,
}
LONG_FUNCTIONS = {
    "bench/panel_quality.py: main": 128,
}


def app_modules() -> list[Path]:
    return [
        path
        for area in AREAS
        for path in sorted(area.rglob("*.py"))
        if "migrations" not in path.relative_to(area).parts
    ]


def function_lengths(tree: ast.Module) -> list[tuple[str, int]]:
    """(qualified name, lines from its `def` to its last line) of every function and
    method, nested ones too (each counted within its outer function as well)."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                assert child.end_lineno is not None
                name = f"{prefix}{child.name}"
                found.append((name, child.end_lineno - child.lineno + 1))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def test_the_walk_finds_every_function_and_counts_its_lines():
    tree = ast.parse(
        "class A:\n"
        "    def f(self):\n"
        "        def g():\n"
        "            return 1\n"
        "        return g\n"
        "async def h():\n"
        "    pass\n"
    )
    assert function_lengths(tree) == [("A.f", 4), ("A.f.g", 2), ("h", 2)]


def test_the_walk_reaches_every_area():
    modules = {path.relative_to(REPO).as_posix() for path in app_modules()}
    assert "judgements/engine/deliberation.py" in modules
    assert "magi_site/settings.py" in modules
    assert "bench/throughput.py" in modules
    assert "clients/magi-client/src/magi_client/plan.py" in modules
    assert not any("/migrations/" in module for module in modules)
    assert not any("/build/" in module for module in modules)


def over(found: dict[str, int], most: int, named: dict[str, int]) -> dict[str, int]:
    """What breaks the rule: longer than `most` and not named, or longer than its name
    allows; and a named one that is no longer long, which must leave the list."""
    broken = {name: lines for name, lines in found.items() if lines > named.get(name, most)}
    stale = {name: found.get(name, 0) for name in named if found.get(name, 0) <= most}
    return {**broken, **stale}


def test_the_rule_holds_a_named_module_to_its_length_and_drops_it_once_short():
    named = {"long.py": 500, "short_now.py": 450}
    found = {"long.py": 500, "grew.py": 401, "short_now.py": 400, "fine.py": 399}
    assert over(found, 400, named) == {"grew.py": 401, "short_now.py": 400}
    assert over({**found, "long.py": 501}, 400, named)["long.py"] == 501


def test_every_module_is_at_most_400_lines_or_named():
    found = {
        path.relative_to(REPO).as_posix(): len(path.read_text().splitlines())
        for path in app_modules()
    }
    assert over(found, MODULE_MAX_LINES, LONG_MODULES) == {}, (
        "split each by job: the new modules' names say what lives there"
    )


def test_every_function_is_at_most_60_lines_or_named():
    found = {
        f"{path.relative_to(REPO).as_posix()}: {name}": lines
        for path in app_modules()
        for name, lines in function_lengths(ast.parse(path.read_text(), str(path)))
    }
    assert over(found, FUNCTION_MAX_LINES, LONG_FUNCTIONS) == {}, "split each into named steps"
