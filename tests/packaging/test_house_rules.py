"""The rules of the house that docs/architecture.md states and no import contract can
check, read from the code itself: one place calls the openai SDK, each kind's states
moved by its own module through the one transition function, one function makes a team,
one module reads the settings from the environment, every ignore of a checker says
why."""

import ast
import io
import re
import tokenize
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


def transition_callers(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name | ast.Attribute)
        and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) == "transition"
        for node in ast.walk(tree)
    )


def test_each_kind_s_states_are_moved_by_its_own_module():
    """The one transition function is called by the one module of each kind (and the
    lease's claim). That nothing else writes a state is checked when it runs, not here:
    tests/judgements/models/test_states.py attacks each other way."""
    callers = {path for path, tree in sources().items() if transition_callers(tree)}
    assert callers == {
        "judgements/engine/lifecycle.py",
        "judgements/outcome/webhooks.py",
        "judgements/outcome/notifications.py",
        "judgements/outcome/slack_outbox.py",
        "judgements/models/leases.py",
    }


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
    # A team file names its Slack secrets by variable (slack.bot_token_env), read when the
    # command plans or applies, so no secret is ever written in the directory.
    "clients/magi-client/src/magi_client/directory.py",
    "judgements/agent_tools/remote.py",
    # A llama.cpp server is started with this process's environment minus its secrets.
    "judgements/llm/local/servers.py",
    # scripts/install-local-model.sh runs it before any settings exist (make setup): the
    # install's own variables (where to put the model, a local wheel folder, the cache).
    "judgements/llm/local/installable.py",
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


# Every ignore names what it ignores and says why beside it: `type: ignore[code]  # why`
# (mypy reads a comment after the brackets as a comment) and `noqa: CODE - why`, each
# after a "#".
IGNORE = re.compile(r"#\s*(type:\s*ignore|noqa)\b(.*)")
REASONED = {
    "type": re.compile(r"^\[[\w-]+(\s*,\s*[\w-]+)*\]\s*#\s*\w"),
    "noqa": re.compile(r"^:\s*[A-Z]+\d+(\s*,\s*[A-Z]+\d+)*\s+(-|#)\s*\w"),
}


def ignores_without_reason(source: str) -> list[str]:
    """The comments of `source` that silence a checker without naming the error and why."""
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and (match := IGNORE.search(token.string)):
            kind = "noqa" if match.group(1) == "noqa" else "type"
            if not REASONED[kind].match(match.group(2)):
                found.append(f"line {token.start[0]}: {token.string}")
    return found


def test_every_ignore_gives_its_reason_beside_it():
    found = {
        str(path.relative_to(REPO)): unreasoned
        for root in (APP, SITE)
        for path in sorted(root.rglob("*.py"))
        if (unreasoned := ignores_without_reason(path.read_text()))
    }
    assert found == {}


def test_the_check_finds_an_ignore_without_a_reason():
    assert ignores_without_reason("x = f()  # type: ignore\n")
    assert ignores_without_reason("x = f()  # type: ignore[attr-defined]\n")
    assert ignores_without_reason("x = f()  # type:ignore[misc]  #\n")
    assert ignores_without_reason("import os  # noqa\n")
    assert ignores_without_reason("import os  # noqa: F401\n")
    assert ignores_without_reason("import os  # why  # noqa: F401\n")
    assert not ignores_without_reason("x = f()  # type: ignore[attr-defined]  # ninja sets it\n")
    assert not ignores_without_reason("x = f()  # type: ignore[misc, arg-type]  # a mixin\n")
    assert not ignores_without_reason("import os  # noqa: F401 - re-exported\n")
    assert not ignores_without_reason("import os  # noqa: E402, F401 - after set-up\n")
    # Words in a string or a docstring are not a comment.
    assert not ignores_without_reason('s = "# type: ignore"\n')


def makes_teams(tree: ast.Module) -> bool:
    """A call of Team.objects.create or get_or_create (a team made past the audit)."""
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("create", "get_or_create", "bulk_create")
        and isinstance(node.func.value, ast.Attribute)
        and node.func.value.attr == "objects"
        and isinstance(node.func.value.value, ast.Name)
        and node.func.value.value.id == "Team"
        for node in ast.walk(tree)
    )


def test_every_team_is_made_through_one_audited_function():
    """team_config.create: the API, the admin, `manage.py team create` and a sign-in."""
    makers = {path for path, tree in sources().items() if makes_teams(tree)}
    assert makers == {"judgements/configuration/team_config.py"}
