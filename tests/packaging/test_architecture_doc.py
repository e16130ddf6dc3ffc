"""What docs/architecture.md says of the code, read against the code where a reader can
check it: the files and functions it names are there, "one way in" lists the checks
`intake/start.py`'s `submit` makes, in its order, the module it says announces a
judgement's start (and end) is the one that does, and the API modules' docstrings list
the endpoints their routers register. (test_architecture.py holds the module table and
the layers; test_judgement_path.py the path's figure.)"""

import ast
import inspect
import re
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
