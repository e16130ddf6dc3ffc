"""The app's sizes (issue 51), and the benchmarks' (issue 57): every module of
judgements/, magi_site/ and bench/ at most 400 lines and every function at most 60, so
each module can be read as one job and each function as one step. Migrations are written
by Django and left out."""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
AREAS = (REPO / "judgements", REPO / "magi_site", REPO / "bench")
MODULE_MAX_LINES = 400
FUNCTION_MAX_LINES = 60
# Measured where another change owns the module: left to it, each with its reason.
OWNED_ELSEWHERE = {
    # Issue 54 rewrites the panel-quality bench (its candidates, its resumable runs).
    "bench/panel_quality.py",
}


def app_modules() -> list[Path]:
    return [
        path
        for area in AREAS
        for path in sorted(area.rglob("*.py"))
        if "migrations" not in path.relative_to(area).parts
        and path.relative_to(REPO).as_posix() not in OWNED_ELSEWHERE
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
    assert not any("/migrations/" in module for module in modules)


def test_every_app_module_is_at_most_400_lines():
    long = {
        path.relative_to(REPO).as_posix(): lines
        for path in app_modules()
        if (lines := len(path.read_text().splitlines())) > MODULE_MAX_LINES
    }
    assert long == {}, "split each by job: the new modules' names say what lives there"


def test_every_app_function_is_at_most_60_lines():
    long = {
        f"{path.relative_to(REPO).as_posix()}: {name}": lines
        for path in app_modules()
        for name, lines in function_lengths(ast.parse(path.read_text(), str(path)))
        if lines > FUNCTION_MAX_LINES
    }
    assert long == {}, "split each into named steps"
