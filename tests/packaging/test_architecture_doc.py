"""What docs/architecture.md says of the code, read against the code where a reader can
check it: the files and functions it names are there, "one way in" lists the checks
`intake/start.py`'s `submit` makes, in its order, the module it says announces a
judgement's start (and end) is the one that does, and the API modules' docstrings list
the endpoints their routers register. (test_architecture.py holds the module table and
the layers; test_judgement_path.py the path's figure.)"""

import ast
import importlib
import inspect
import io
import re
import tokenize
from pathlib import Path

import pytest

from judgements.api import evaluation_endpoints, judgement_endpoints
from judgements.intake import start

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "judgements"
# A numbered step of a list, by its name: "1. limits (`intake/limits.py`): …",
# "3. validation: …", "4. panel resolution: …".
STEP = re.compile(r"^(\d+)\. ([a-z][a-z ]*?)(?: \(|:)", re.M)
# A numbered step's comment in code: "# 1. A cheap …", "# 3 and 4.".
STEP_COMMENT = re.compile(r"#\s*(\d+)(?: and (\d+))?\.")
# An endpoint as a module's docstring lists it: "    GET  /api/judgements/<id>/?wait=30".
ENDPOINT = re.compile(r"^\s+(GET|POST|PUT|PATCH|DELETE)\s+/api(/\S*)", re.M)


def page() -> str:
    return (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    return page().split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def found_file(named: str) -> Path | None:
    """Where a path the page names is: under judgements/, the repository or
    tests/packaging/ (the page names the house's tests by their file name)."""
    for base in (APP, REPO, REPO / "tests" / "packaging"):
        if (base / named).is_file():
            return base / named
    return None


def top_level_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }


def test_every_file_the_page_names_is_there():
    named = set(re.findall(r"`([\w./]+\.(?:py|md|toml))`", page()))
    assert named, "the page names files"
    assert sorted(path for path in named if found_file(path) is None) == []


def test_every_function_the_page_names_in_a_module_is_defined_there():
    text = " ".join(page().split())
    pairs = re.findall(r"`([\w/]+\.py)`'s `(\w+)`", text)
    pairs += [(module, name) for name, module in re.findall(r"`(\w+)` in `([\w/]+\.py)`", text)]
    assert len(pairs) >= 3, pairs
    missing = []
    for module, name in pairs:
        path = found_file(module)
        if path is None or name not in top_level_names(path):
            missing.append(f"{module}: {name}")
    assert missing == []


def test_one_way_in_lists_the_checks_submit_makes_in_its_order():
    listed = STEP.findall(section("One way in"))
    in_code = STEP.findall(inspect.getdoc(start) or "")
    assert [name for _, name in listed] == [name for _, name in in_code]
    assert [int(number) for number, _ in listed] == list(range(1, len(listed) + 1))
    # submit marks where each step is taken, in the module docstring's numbers.
    marked = {
        int(number)
        for pair in STEP_COMMENT.findall(inspect.getsource(start.submit))
        for number in pair
        if number
    }
    assert marked == set(range(1, len(in_code) + 1))


def names_event(node: ast.AST, event: str) -> bool:
    """`node` reads Event.<event> (or events.Event.<event>)."""
    if not isinstance(node, ast.Attribute) or node.attr != event:
        return False
    owner = node.value
    return (isinstance(owner, ast.Name) and owner.id == "Event") or (
        isinstance(owner, ast.Attribute) and owner.attr == "Event"
    )


def publishers(event: str) -> set[str]:
    """The modules of judgements/ that name the event Event.<event> in code."""
    return {
        str(path.relative_to(APP))
        for path in APP.rglob("*.py")
        if any(names_event(node, event) for node in ast.walk(ast.parse(path.read_text())))
    }


@pytest.mark.parametrize(
    "said, event", [("announces the start", "JUDGING_STARTED"), ("announces the end", "FINISHED")]
)
def test_the_step_that_announces_is_the_module_that_publishes(said, event):
    steps = [
        step
        for paragraph in section("One judgement, from claim to push").split("\n\n")
        for step in re.split(r"\n(?=\d+\. )", paragraph)
    ]
    (step,) = [" ".join(step.split()) for step in steps if said in " ".join(step.split())]
    actor = re.match(r"\d+\. `([\w/]+\.py)`", step)
    assert actor is not None, step
    assert {actor.group(1)} == publishers(event), step


def routes(router) -> set[tuple[str, str]]:
    """(method, path) of every operation the router registers, ids as <id>."""
    return {
        (method, re.sub(r"\{(?:\w+:)?\w+\}", "<id>", path))
        for path, view in router.path_operations.items()
        for operation in view.operations
        for method in operation.methods
    }


@pytest.mark.parametrize("module", [judgement_endpoints, evaluation_endpoints])
def test_the_api_modules_list_the_endpoints_they_register(module):
    listed = {
        (method, path.split("?", 1)[0]) for method, path in ENDPOINT.findall(module.__doc__ or "")
    }
    assert sorted(listed) == sorted(routes(module.router))


# --- every name the page gives, and every `module.name` the code's own words give -------

# Names the page gives that are not MAGI's own: where each comes from.
OUTSIDE_NAMES = {
    "Any": "typing",
    "object": "builtins",
    "ParamSpec": "typing",
    "TypedDict": "typing",
    "login_required": "django.contrib.auth.decorators",
}
# `module.name` or `Class.name` in a comment or a docstring (not a file name such as
# `calls.py`, nor a longer dotted path's middle).
CODE_REFERENCE = re.compile(r"(?<![\w./-])([A-Za-z_]\w*)\.([A-Za-z_]\w*)(?![\w/-]|\.\w)")
FILE_SUFFIXES = {"py", "md", "toml", "json", "jsonl", "yaml", "html", "txt", "sh", "cfg"}


def app_modules() -> dict[str, Path]:
    """judgements/'s modules and packages by dotted name (migrations left out)."""
    found = {}
    for path in APP.rglob("*.py"):
        if "migrations" in path.parts:
            continue
        parts = path.relative_to(REPO).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def defined_names() -> set[str]:
    """Every class, function, method and assigned name of judgements/, magi_site/ and the
    client package."""
    names = set()
    roots = (APP, REPO / "magi_site", REPO / "clients" / "magi-client" / "src" / "magi_client")
    for path in (path for root in roots for path in root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.id if isinstance(node, ast.Name) else node.attr)
    return names


def test_every_area_the_page_names_is_there():
    text = page()
    tree = text.split("```\n", 2)[1]
    areas = set(re.findall(r"^  (\w+)/ ", tree, re.M))
    areas |= {
        area
        for layer in re.findall(r"^\d+\. `([a-z_ :|]+)`", app_layers(), re.M)
        for area in re.split(r"[ :|]+", layer)
    }
    assert len(areas) > 15, areas
    assert sorted(area for area in areas if not (APP / area).is_dir()) == []
    folders = set(re.findall(r"`([\w./-]+/)`", text)) | set(re.findall(r"^([\w.-]+/) ", tree, re.M))
    missing = [f for f in folders if not any((base / f).is_dir() for base in (APP, REPO))]
    assert sorted(missing) == []


def app_layers() -> str:
    return section("Layers").split("\n### The client's layers", 1)[0]


def test_every_module_the_client_s_layers_name_is_there():
    client = REPO / "clients" / "magi-client" / "src" / "magi_client"
    layers = section("Layers").split("\n### The client's layers", 1)[1]
    modules = {
        module
        for layer in re.findall(r"^\d+\. `([a-z_ :|]+)`", layers, re.M)
        for module in re.split(r"[ :|]+", layer)
    }
    assert len(modules) > 15, modules
    assert sorted(m for m in modules if not (client / f"{m}.py").is_file()) == []


def test_every_name_the_page_gives_is_defined():
    text = page()
    named = set(re.findall(r"`([A-Za-z_]\w*)`", text))
    # and the settings the page quotes from pyproject.toml (mypy's, say)
    config = set(re.findall(r"^(\w+) *=", (REPO / "pyproject.toml").read_text(), re.M))
    # the client's modules, which its layers name one by one
    client = {path.stem for path in (REPO / "clients/magi-client/src/magi_client").glob("*.py")}
    defined = defined_names() | set(OUTSIDE_NAMES) | config | client
    packages = {path.parent.name for path in REPO.rglob("__init__.py") if ".venv" not in path.parts}
    commands = {"magi", "figure"}  # the console script; a line the bench prints
    missing = named - defined - packages - commands
    assert sorted(missing) == []
    # `python -m X` runs a module that is there.
    for module in re.findall(r"`python -m ([\w.]+)`", text):
        assert module in app_modules(), module


def comments_and_docstrings(path: Path) -> list[tuple[int, str]]:
    source = path.read_text(encoding="utf-8")
    found = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                found.append((getattr(node, "lineno", 1), docstring))
    return found


def class_has(module: str, node: ast.ClassDef, name: str) -> bool:
    """The class defines or inherits `name`: an attribute, a field (Django's, pydantic's,
    a dataclass's annotation) or an attribute its methods set on self."""
    cls = getattr(importlib.import_module(module), node.name, None)
    if cls is not None and (
        hasattr(cls, name)
        or any(name in getattr(k, "__annotations__", {}) for k in getattr(cls, "__mro__", ()))
        or name in getattr(cls, "model_fields", {})
    ):
        return True
    return any(
        isinstance(sub, ast.Attribute)
        and isinstance(sub.ctx, ast.Store)
        and isinstance(sub.value, ast.Name)
        and sub.value.id == "self"
        and sub.attr == name
        for sub in ast.walk(node)
    )


def module_has(module: str, name: str) -> bool:
    if hasattr(importlib.import_module(module), name):
        return True
    return f"{module}.{name}" in app_modules()


def test_every_module_dot_name_the_code_names_is_there():
    """`lifecycle.claim`, `HeldLease.keep`, `judgements.cli`: where a comment or a
    docstring under judgements/ names a module's or a class's member, it exists."""
    modules = app_modules()
    by_name: dict[str, list[str]] = {}
    for dotted in modules:
        by_name.setdefault(dotted.rsplit(".", 1)[-1], []).append(dotted)
    classes: dict[str, list[tuple[str, ast.ClassDef]]] = {}
    for dotted, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                classes.setdefault(node.name, []).append((dotted, node))
    checked, stale = 0, []
    for path in modules.values():
        for line, text in comments_and_docstrings(path):
            for owner, name in CODE_REFERENCE.findall(text):
                if name in FILE_SUFFIXES or (owner not in by_name and owner not in classes):
                    continue
                checked += 1
                if not any(module_has(m, name) for m in by_name.get(owner, [])) and not any(
                    class_has(m, node, name) for m, node in classes.get(owner, [])
                ):
                    stale.append(f"{path.relative_to(REPO)}:{line}: {owner}.{name}")
    assert checked > 50, checked
    assert stale == []
