"""What the house is made of, counted from its source (issues 57 and 71): annotations
naming `Any` and `dict[str, Any]`, uses of an alias that stands for `Any`, `object` bags
(`dict[str, object]`, `Mapping[str, object]`) and parameters typed `object`, the
checker's ignores, and the cycles of the import graph (an import inside a function or
behind TYPE_CHECKING counts like any other), module by module and folded to folders.
Shared by tests/packaging/test_house_counts.py, which holds the counts to their caps,
and bench/house_counts.py, which prints them."""

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
# Where the annotations are counted, each place on its own: the app and the client (held
# to `mypy --strict`), the site, and the benches.
PLACES = {
    "judgements and the client": (REPO / "judgements", CLIENT),
    "magi_site": (REPO / "magi_site",),
    "bench": (REPO / "bench",),
}
IGNORE = re.compile(r"#\s*type:\s*ignore\b")
# A bag: a mapping of strings to anything at all, which says no more than `Any` would of
# what it carries (its shape belongs in a TypedDict or a dataclass).
BAG = re.compile(
    r"^(typing\.|collections\.abc\.)?(dict|Dict|Mapping|MutableMapping)\[str,object\]$"
)
KINDS = ("Any", "dict[str, Any]", "Any by alias", "object bags", "object parameters")
KINDS_ALL = (*KINDS, "type: ignore")


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


def object_bags(annotation: ast.expr) -> int:
    """How often the annotation says `dict[str, object]` or `Mapping[str, object]`."""
    return sum(
        1
        for node in unquoted(annotation)
        if isinstance(node, ast.Subscript) and BAG.match(ast.unparse(node).replace(" ", ""))
    )


def object_parameters(tree: ast.AST) -> int:
    """The parameters annotated `object` (`*args: object` and `**sent: object` too): a
    value the function takes without saying what it is."""
    found = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            given = node.args
            arguments = [*given.posonlyargs, *given.args, *given.kwonlyargs]
            arguments += [a for a in (given.vararg, given.kwarg) if a is not None]
            found += sum(
                1
                for a in arguments
                if isinstance(a.annotation, ast.Name) and a.annotation.id == "object"
            )
    return found


# --- aliases: a name that stands for `Any` or a bag, counted where it is used -------------


def module_name(path: Path) -> str:
    """A module's dotted name: the app's, the site's and the client's as imported, a
    bench's as `bench.<name>`."""
    for package, root in {**PACKAGES, "bench": REPO / "bench"}.items():
        if path.is_relative_to(root):
            parts = [package, *path.relative_to(root).with_suffix("").parts]
            return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    return path.stem


def aliases_in(tree: ast.AST, module: str) -> dict[str, str]:
    """The module's aliases of `Any` or of a bag (`Scope = dict[str, Any]`,
    `Kind = Resource[Any, Any]`, `Fields = Mapping[str, object]`), by dotted name, each
    with what it stands for."""
    found: dict[str, str] = {}
    if not isinstance(tree, ast.Module):
        return found
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            target, value = statement.target, statement.value
        else:
            continue
        if not isinstance(target, ast.Name) or isinstance(value, ast.Call):
            continue
        if names_any(value, quoted=False):
            found[f"{module}.{target.id}"] = "Any by alias"
        elif object_bags(value):
            found[f"{module}.{target.id}"] = "object bags"
    return found


def local_names(tree: ast.AST, module: str, is_package: bool) -> dict[str, str]:
    """What each name a module imports stands for, absolute (`resources` for
    `judgements.api.resources`, `Kind` for `judgements.api.resources.Kind`)."""
    package = module if is_package else module.rpartition(".")[0]
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.asname or alias.name.partition(".")[0]] = (
                    alias.name if alias.asname else alias.name.partition(".")[0]
                )
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                found[alias.asname or alias.name] = f"{base}.{alias.name}"
    return found


def alias_uses(
    annotation: ast.expr, module: str, names: dict[str, str], aliases: dict[str, str]
) -> set[str]:
    """What the aliases an annotation uses stand for (an alias of the module itself, one
    imported by name, or one read off its module: `resources.Kind`)."""
    found = set()
    for node in unquoted(annotation):
        written = ast.unparse(node) if isinstance(node, ast.Name | ast.Attribute) else None
        if written is None:
            continue
        head, _, rest = written.partition(".")
        full = names.get(head, f"{module}.{head}") + (f".{rest}" if rest else "")
        if full in aliases:
            found.add(aliases[full])
    return found


def counts(place: str = "judgements and the client") -> dict[str, int]:
    """The counts of one of PLACES: annotations naming Any, those saying dict[str, Any],
    annotations using an alias of Any (the alias itself counts as naming Any where it is
    written), object bags (an alias of one counted where it is used), parameters typed
    `object`, and the type: ignores."""
    found = dict.fromkeys(KINDS_ALL, 0)
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in sources(*PLACES[place])}
    aliases: dict[str, str] = {}
    # An alias is counted wherever it is used, whichever place wrote it.
    for path in sources(*(root for roots in PLACES.values() for root in roots)):
        tree = trees.get(path) or ast.parse(path.read_text(encoding="utf-8"))
        aliases.update(aliases_in(tree, module_name(path)))
    for path, tree in trees.items():
        module = module_name(path)
        names = local_names(tree, module, path.name == "__init__.py")
        for annotation in annotations(tree):
            found["Any"] += names_any(annotation)
            found["dict[str, Any]"] += dicts_of_any(annotation)
            found["object bags"] += object_bags(annotation)
            for kind in alias_uses(annotation, module, names, aliases):
                found[kind] += 1
        found["object parameters"] += object_parameters(tree)
        found["type: ignore"] += type_ignores(path.read_text(encoding="utf-8"))
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


def folded(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph folded to the house's folders, as its drawing shows them: each area
    of the app (`judgements.engine`), the site (`magi_site`) and the client
    (`magi_client`), and an arrow from one to another where any module imports any."""

    def folder(module: str) -> str:
        parts = module.split(".")
        return ".".join(parts[:2]) if parts[0] == "judgements" else parts[0]

    found: dict[str, set[str]] = {}
    for module, imported in graph.items():
        arrows = found.setdefault(folder(module), set())
        arrows.update(folder(name) for name in imported if folder(name) != folder(module))
    return found


def house_order() -> list[str]:
    """The house's folders top first, as the contracts in pyproject.toml place them: the
    site, the app's areas in their layers' order, the client."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = [c["layers"] for c in config["contracts"] if c["id"] == "layers"]
    areas = [name.strip() for layer in layers for name in re.split(r"[:|]", layer)]
    return ["magi_site", *(f"judgements.{area}" for area in areas), "magi_client"]


def drawing(graph: dict[str, set[str]]) -> list[str]:
    """The house drawn from its imports, top first: each folder and the folders it
    imports. An arrow running back up names a folder drawn above it."""
    order = house_order()
    short = {name: name.removeprefix("judgements.") for name in order}
    width = max(map(len, short.values()))
    lines = []
    for name in order:
        below = [short[other] for other in order if other in graph.get(name, set())]
        lines.append(f"{short[name]:<{width}} → {' '.join(below) if below else '(nothing)'}")
    return lines


def back_arrows(graph: dict[str, set[str]]) -> list[str]:
    """Every arrow of the drawing that runs back up (or sideways to itself): a folder
    importing one drawn above it, or one the drawing does not place."""
    order = house_order()
    place = {name: i for i, name in enumerate(order)}
    return sorted(
        f"{name} → {other}"
        for name in order
        for other in graph.get(name, set())
        if place.get(other, -1) <= place[name]
    )
