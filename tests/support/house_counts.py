"""What the house is made of, counted from its source (issue 57): annotations naming `Any`
and `dict[str, Any]`, the checker's ignores, and the cycles of the import graph (an
import inside a function or behind TYPE_CHECKING counts like any other). Shared by
tests/packaging/test_house_counts.py, which holds the counts to their caps, and
bench/house_counts.py, which prints them."""

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLIENT = REPO / "clients" / "magi-client" / "src" / "magi_client"
# The packages whose modules the import graph joins, by name.
PACKAGES = {
    "judgements": REPO / "judgements",
    "magi_site": REPO / "magi_site",
    "magi_client": CLIENT,
}
# Where the annotations are counted: the app and the client.
TYPED = (REPO / "judgements", CLIENT)
IGNORE = re.compile(r"#\s*type:\s*ignore\b")


def sources(*roots: Path) -> Iterator[Path]:
    """Every module under `roots`, migrations left out (Django writes them)."""
    for root in roots:
        yield from (path for path in sorted(root.rglob("*.py")) if "migrations" not in path.parts)


def annotations(tree: ast.AST) -> Iterator[ast.expr]:
    """Every annotation of a module: its functions' arguments and returns, its variables'
    (one written as a string, read as the expression it holds)."""
    for annotation in written_annotations(tree):
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            yield ast.parse(annotation.value, mode="eval").body
        else:
            yield annotation


def written_annotations(tree: ast.AST) -> Iterator[ast.expr]:
    # A type alias is an annotation written once for many (`Scope = dict[str, Any]`): a
    # module's assignment of a subscripted type counts as one, and so does one that names
    # `Any` itself (`Anything = Any`, `Loose = Any | None`), so no other name hides it.
    if isinstance(tree, ast.Module):
        for statement in tree.body:
            if isinstance(statement, ast.Assign) and (
                isinstance(statement.value, ast.Subscript)
                or names_any(statement.value, quoted=False)
            ):
                yield statement.value
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            given = node.args
            arguments: list[ast.arg | None] = [*given.posonlyargs, *given.args, *given.kwonlyargs]
            arguments += [given.vararg, given.kwarg]
            yield from (a.annotation for a in arguments if a is not None and a.annotation)
            if node.returns is not None:
                yield node.returns
        elif isinstance(node, ast.AnnAssign):
            yield node.annotation


def names_any(annotation: ast.expr, quoted: bool = True) -> bool:
    """The annotation says `Any` somewhere (`Any`, `typing.Any`), a part of it written as
    a string included (`dict[str, "Resource[Any, Any]"]`) unless `quoted` is false (a
    module's assignment, whose strings are text, not types)."""
    for node in unquoted(annotation) if quoted else ast.walk(annotation):
        if isinstance(node, ast.Name) and node.id == "Any":
            return True
        if isinstance(node, ast.Attribute) and node.attr == "Any":
            return True
    return False


def unquoted(annotation: ast.expr) -> Iterator[ast.AST]:
    """Every node of an annotation, reading a string inside it as the expression it holds
    (a forward reference: `list["JsonValue"]`)."""
    for node in ast.walk(annotation):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                quoted = ast.parse(node.value, mode="eval").body
            except (SyntaxError, ValueError):  # a Literal's text, not a type
                continue
            yield from unquoted(quoted)
        else:
            yield node


def dicts_of_any(annotation: ast.expr) -> int:
    """How often the annotation says `dict[str, Any]`."""
    return sum(
        1
        for node in unquoted(annotation)
        if isinstance(node, ast.Subscript)
        and ast.unparse(node).replace(" ", "") in ("dict[str,Any]", "Dict[str,Any]")
    )


def type_ignores(source: str) -> int:
    return sum(
        1
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT and IGNORE.search(token.string)
    )


def counts() -> dict[str, int]:
    """The annotations naming Any, those saying dict[str, Any], and the type: ignores, in
    judgements/ and the client."""
    found = {"Any": 0, "dict[str, Any]": 0, "type: ignore": 0}
    for path in sources(*TYPED):
        text = path.read_text(encoding="utf-8")
        for annotation in annotations(ast.parse(text)):
            found["Any"] += names_any(annotation)
            found["dict[str, Any]"] += dicts_of_any(annotation)
        found["type: ignore"] += type_ignores(text)
    return found


# --- the import graph -------------------------------------------------------------------


def module_names() -> dict[str, Path]:
    found = {}
    for package, root in PACKAGES.items():
        for path in sources(root):
            parts = [package, *path.relative_to(root).with_suffix("").parts]
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(tree: ast.AST, module: str, is_package: bool) -> Iterator[str]:
    """Every name a module imports, anywhere in it, absolute."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            yield from (f"{base}.{alias.name}" for alias in node.names)


def import_graph() -> dict[str, set[str]]:
    """Each module of the app, the site and the client, and the modules of theirs it
    imports (a name imported from a module counts as that module)."""
    names = module_names()

    def owner(name: str) -> str | None:
        while name and name not in names:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in names.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found = {owner(name) for name in imports(tree, module, path.name == "__init__.py")}
        graph[module] = {name for name in found if name is not None and name != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module (Tarjan's), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(graph.get(module, ())):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            part = []
            while (top := stack.pop()) != module:
                part.append(top)
            if part:
                found.append(sorted([module, *part]))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found
