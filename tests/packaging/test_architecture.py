"""docs/architecture.md names every module of judgements/ and nothing that is gone, and
the rules of the house hold: core/ needs no Django, and the pages and the API do not
import each other's views."""

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "judgements"
SKIPPED = {"migrations", "management", "examples"}


def modules() -> set[str]:
    return {
        str(path.relative_to(APP))
        for path in APP.rglob("*.py")
        if path.name != "__init__.py"
        and not SKIPPED & set(path.relative_to(APP).parts)
        and path.name not in {"apps.py"}
    }


def imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
        elif isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
    return names


def test_the_architecture_page_names_every_module_and_only_those():
    page = (REPO / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"^\| `([a-z_/]+\.py)` \|", page, re.M))
    assert named == modules()


def test_core_needs_no_django():
    for path in (APP / "core").glob("*.py"):
        assert not any(name.startswith("django") for name in imported(path)), path


def test_the_pages_and_the_api_do_not_import_each_other():
    for area, other in (("web", "judgements.api"), ("api", "judgements.web")):
        for path in (APP / area).glob("*.py"):
            assert not any(name.startswith(other) for name in imported(path)), path
