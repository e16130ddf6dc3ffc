"""docs/architecture.md names every module of judgements/ and nothing that is gone, its
layers are the contract's, and the contract holds: import-linter's contracts in
pyproject.toml (the areas import downward only, the top areas not each other, core/ and
the `magi` command without Django, the client's modules downward only and nothing of the
app) pass, as `make lint` runs them."""

import re
import subprocess
import sys
import tomllib
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


def page() -> str:
    return (REPO / "docs" / "architecture.md").read_text()


def test_the_architecture_page_names_every_module_and_only_those():
    named = set(re.findall(r"^\| `([a-z_/]+\.py)` \|", page(), re.M))
    assert named == modules()


def layers(contract: str) -> list[str]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    (found,) = [c["layers"] for c in config["contracts"] if c["id"] == contract]
    return list(found)


def listed(section: str) -> list[str]:
    return re.findall(r"^\d+\. `([a-z_ :|]+)`", section, re.M)


def test_the_page_lists_the_contracts_layers_in_order():
    section = page().split("## Layers", 1)[1].split("\n## ", 1)[0]
    app, client = section.split("\n### The client's layers", 1)
    assert listed(app) == layers("layers")
    assert listed(client) == layers("client-layers")


def test_the_imports_keep_the_contracts():
    lint_imports = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(
        [str(lint_imports), "--no-cache", "--no-logo"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
