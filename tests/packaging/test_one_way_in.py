"""One way in: every new judgement starts through `submit` (judgements/intake/start.py),
which takes the same checks in the same order for the page, the API, the MCP tools, the
command line and evaluation runs. This reads every module of `judgements/` and `bench/`
and fails when anything else stores a new judgement: uses start.py's storing steps, or
creates Judgement, Agent or IdempotencyKey rows itself."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
THE_WAY_IN = ROOT / "judgements" / "intake" / "start.py"
START_MODULE = "judgements.intake.start"
# What an entry point may use of start.py: the door and what it says who and what.
PUBLIC = {"submit", "submit_from_loop", "Submission", "Started", "escalate"}
# The rows a new judgement is: creating one anywhere is starting a judgement.
ROWS = {"Judgement", "Agent", "IdempotencyKey"}
CREATING = {"create", "bulk_create", "get_or_create", "update_or_create"}
# The factories of unsaved rows (intake/rows.py), which only start.py's `store` calls.
FACTORIES = {"judgement_row", "agent_rows"}
# start.py's functions that lead to rows being stored: the door and its own steps.
# `escalate` is the story's next level (docs/escalation.md), stored by the same `store`.
STEPS = {"submit", "submit_from_loop", "store_and_wake", "store", "escalate"}


def creates_rows(node: ast.AST) -> bool:
    """A call that makes one of ROWS: `Judgement(...)`, `rows.judgement_row(...)`,
    `agent_rows(...)` or `<Row>.objects.create(...)` and the like."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Name):
        return func.id in ROWS or func.id in FACTORIES
    if not isinstance(func, ast.Attribute):
        return False
    owner = func.value
    if func.attr in FACTORIES:
        return True
    return (
        func.attr in CREATING
        and isinstance(owner, ast.Attribute)
        and owner.attr == "objects"
        and isinstance(owner.value, ast.Name)
        and owner.value.id in ROWS
    )


def ways_in(source: str) -> list[str]:
    """Where a module outside start.py stores a judgement, or reaches past `submit`."""
    tree = ast.parse(source)
    found = []
    # The names start.py is known by in this module (`from judgements.intake import start`).
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == START_MODULE:
            for alias in node.names:
                if alias.name not in PUBLIC:
                    found.append(f"line {node.lineno}: imports start.{alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module == "judgements.intake":
            aliases |= {a.asname or a.name for a in node.names if a.name == "start"}
        elif isinstance(node, ast.Import):
            aliases |= {a.asname or a.name for a in node.names if a.name == START_MODULE}
    in_factories = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name in FACTORIES
        for inner in ast.walk(node)
    }
    for node in ast.walk(tree):
        if id(node) in in_factories:
            continue
        if (
            isinstance(node, ast.Attribute)
            and ast.unparse(node.value) in aliases
            and node.attr not in PUBLIC
        ):
            found.append(f"line {node.lineno}: uses start.{node.attr}")
        if isinstance(node, ast.Call) and creates_rows(node):
            found.append(f"line {node.lineno}: creates {ast.unparse(node.func)}")
    return found


def leading_to_rows(source: str) -> set[str]:
    """The functions of a module that create rows, or call (or pass on) one that does."""
    functions = {
        node.name: node
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    leading = {name for name, f in functions.items() if any(map(creates_rows, ast.walk(f)))}
    while True:
        more = {
            name
            for name, f in functions.items()
            if any(isinstance(n, ast.Name) and n.id in leading for n in ast.walk(f))
        }
        if more <= leading:
            return leading
        leading |= more


def module_level_calls_to(source: str, names: set[str]) -> list[str]:
    """Calls made when the module is imported, outside any function, to one of `names`."""
    found = []
    for statement in ast.parse(source).body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for node in ast.walk(statement):
            called = node.func if isinstance(node, ast.Call) else None
            if isinstance(called, ast.Name) and called.id in names:
                found.append(f"line {called.lineno}: {called.id}()")
    return found


def test_nothing_but_submit_starts_a_judgement():
    found = {
        str(path.relative_to(ROOT)): uses
        for area in ("judgements", "bench")
        for path in sorted((ROOT / area).rglob("*.py"))
        if path != THE_WAY_IN and "migrations" not in path.parts
        if (uses := ways_in(path.read_text()))
    }
    assert found == {}


def test_in_start_py_only_submit_and_its_steps_store():
    source = THE_WAY_IN.read_text()
    assert leading_to_rows(source) == STEPS
    assert module_level_calls_to(source, STEPS) == []


def test_the_check_finds_each_way_past_submit():
    assert ways_in("from judgements.intake.start import store\n")
    assert ways_in("from judgements.intake import start\nstart.store_and_wake([], by, '')\n")
    assert ways_in("from judgements.intake import start as s\ns.store([], by)\n")
    assert ways_in("Judgement.objects.create(title='t')\n")
    assert ways_in("Judgement.objects.bulk_create([])\n")
    assert ways_in("Judgement(title='t').save()\n")
    assert ways_in("rows.judgement_row(case)\n")
    assert ways_in("from judgements.intake.rows import judgement_row\njudgement_row(case)\n")
    assert ways_in("Agent.objects.bulk_create(rows.agent_rows(1, agents))\n")
    assert ways_in("IdempotencyKey.objects.create(key='k')\n")
    assert not ways_in(
        "from judgements.intake import start\nstart.submit([case], start.Submission())\n"
    )
    assert not ways_in("Judgement.objects.filter(pk=1).update(title='t')\n")
    assert not ways_in("SuiteCase.objects.bulk_create([])\n")
    # A factory of unsaved rows may build them; only calling it is starting a judgement.
    assert not ways_in("def agent_rows(pk, agents):\n    return [Agent(judgement_id=pk)]\n")
    assert ways_in("def rows(pk, agents):\n    return [Agent(judgement_id=pk)]\n")


def test_the_check_follows_a_call_to_a_storing_function():
    source = (
        "def store(cases):\n    return Judgement.objects.bulk_create([])\n"
        "def submit(cases):\n    return store(cases)\n"
        "def backdoor(cases):\n    return submit(cases)\n"
        "def harmless():\n    return 1\n"
    )
    assert leading_to_rows(source) == {"store", "submit", "backdoor"}
    assert module_level_calls_to(source + "store([])\n", {"store"}) == ["line 9: store()"]
