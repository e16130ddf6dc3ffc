"""The rules of the house that docs/architecture.md states and no import contract can
check, read from the code itself: one place calls the openai SDK, one module changes a
judgement's status, one module reads the settings from the environment."""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "judgements"
SITE = REPO / "magi_site"
CLIENT = REPO / "clients" / "magi-client" / "src" / "magi_client"


def sources() -> dict[str, ast.Module]:
    return {
        str(path.relative_to(REPO)): ast.parse(path.read_text())
        for root in (APP, SITE, CLIENT)
        for path in sorted(root.rglob("*.py"))
        if "migrations" not in path.parts
    }


def imported_modules(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_only_llm_calls_uses_the_openai_sdk():
    users = {
        path
        for path, tree in sources().items()
        if any(name == "openai" or name.startswith("openai.") for name in imported_modules(tree))
    }
    assert users == {"judgements/llm/calls.py"}


def status_writes(tree: ast.Module) -> list[int]:
    """Lines that write a judgement's status: an UPDATE or a create naming `status=`."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in {"update", "create", "bulk_update"}
        and any(keyword.arg == "status" for keyword in node.keywords)
    ]


def test_only_the_lifecycle_changes_a_judgements_status():
    writers = {path: lines for path, tree in sources().items() if (lines := status_writes(tree))}
    assert set(writers) == {"judgements/engine/lifecycle.py"}, writers


# Reading the environment outside the typed settings, each with its reason.
ENVIRONMENT_READERS = {
    # The typed settings: every MAGI_* variable, and unknown ones refused.
    "magi_site/environment.py",
    # The ASGI entry point names the settings module, as Django's own template does.
    "magi_site/asgi.py",
    # The `magi` command runs without Django (an import contract says so): MAGI_URL and
    # MAGI_TOKEN are its own options' defaults, not settings of a deployment.
    "clients/magi-client/src/magi_client/gate.py",
    "clients/magi-client/src/magi_client/config.py",
    "judgements/agent_tools/remote.py",
    # A llama.cpp server is started with this process's environment minus its secrets.
    "judgements/llm/local/servers.py",
}


def reads_environment(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in {"environ", "getenv", "environb"}
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
        ):
            return True
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == "os"
            and any(alias.name in {"environ", "getenv"} for alias in node.names)
        ):
            return True
    return False


def test_the_settings_are_read_from_the_environment_in_one_place():
    readers = {path for path, tree in sources().items() if reads_environment(tree)}
    assert readers == ENVIRONMENT_READERS
