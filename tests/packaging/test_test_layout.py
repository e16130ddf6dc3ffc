"""The tests mirror judgements/ (docs/architecture.md): every module with logic has its
test module at the same place, judgements/<area>/<module>.py beside
tests/judgements/<area>/test_<module>.py; and bench/ borrows from the tests only what
tests/support/ holds for sharing, as no test module imports another."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "judgements"
TESTS = ROOT / "tests" / "judgements"

# Modules without their mirroring test module, each with where it is tested today. The
# list only shrinks: a module that gains its test module must leave it (the second test).
UNMIRRORED = {
    # Needs none: no logic of its own to test apart from the code it serves.
    "llm/local/process.py": "the server process itself, run by llm/local/test_servers.py",
    "cli/main.py": "argument parsing only; tests/magi_client/ run the installed command",
    "engine/worker.py": "starts the runner in the web process; magi_site/test_settings.py",
    "configuration/panel_fields.py": "shapes only (TypedDicts); api/test_panel_endpoints.py",
    "configuration/change_request.py": "a shape only (a dataclass); api/test_panel_endpoints.py",
    "core/settings_read.py": "types only (settings the app reads); models/test_magi_settings.py",
    "core/briefs.py": "shapes only (dataclasses); core/test_prompts.py, test_continued_chat.py",
    # Gaps: tested through the pages, the API or the commands in another module today.
    "admin/base.py": "admin/test_admin.py (audit records cannot be changed)",
    "admin/evaluations.py": "admin/test_admin.py, admin/test_trust_admin.py",
    "admin/judgements.py": "admin/test_admin.py, admin/test_trust_admin.py",
    "admin/records.py": "admin/test_admin.py",
    "agent_tools/in_app.py": "agent_tools/test_tools.py, over /mcp",
    "agent_tools/remote.py": "agent_tools/test_tools.py, over stdio",
    "api/document.py": "api/test_openapi.py",
    "api/changes.py": "api/test_panel_endpoints.py (If-Match, the dry run)",
    "api/config_schemas.py": "api/test_panel_endpoints.py and the other config endpoints",
    "api/slack_schemas.py": "api/test_slack_endpoints.py",
    "configuration/names.py": "api/test_team_endpoints.py, api/test_budget_endpoints.py",
    "configuration/panel_config.py": "api/test_panel_endpoints.py",
    "configuration/budget_config.py": "api/test_budget_endpoints.py, admin/test_admin.py",
    "configuration/team_config.py": "api/test_team_endpoints.py",
    "api/evaluation_schemas.py": "api/test_evaluation_endpoints.py, api/test_openapi.py",
    "api/schemas.py": "api/test_judgement_endpoints.py, api/test_openapi.py",
    "api/urls.py": "api/test_openapi.py",
    "core/errors.py": "every test of a refusal (InvalidInput's fields)",
    "evaluations/suite_schema.py": "evaluations/test_suites.py",
    "infrastructure/forms.py": "security/test_input_*.py, the pages' tests",
    "intake/creation_gate.py": "every POST of api/test_judgement_endpoints.py passes it",
    "intake/limits.py": "security/test_rate_limits.py, evaluations/test_runs.py",
    "intake/schema_errors.py": "intake/test_json_cases.py, api/test_judgement_endpoints.py",
    "intake/schemas.py": "intake/test_json_cases.py, api/test_openapi.py",
    "llm/local/files.py": "llm/local/test_servers.py",
    "management/commands/load_examples.py": "panels/test_saving.py, packaging/test_wheel.py",
    "management/commands/runworker.py": "durability/test_faults.py",
    "management/commands/webhook_secret.py": "outcome/test_webhooks.py",
    "models/access.py": "api/test_judgement_endpoints.py, intake/test_idempotency.py",
    "models/certificates.py": "evaluations/test_certify.py",
    "models/checks.py": "engine/test_checks.py",
    "models/choices.py": "every test of a status",
    "models/agents.py": "engine/test_deliberation.py",
    "models/evaluations.py": "evaluations/test_runs.py",
    "models/judgements.py": "engine/, web/ and outcome/ tests",
    "models/outcome.py": "outcome/test_overrides.py, outcome/test_webhooks.py",
    "models/panels.py": "panels/test_saving.py, intake/test_saved_panels.py",
    "web/navigation.py": "browser/test_teams.py: the reviewer has the link, an outsider not",
    "models/identity.py": "identity/test_people.py",
    "models/notifications.py": "outcome/test_notifications.py, web/test_notification_pages.py",
    "models/budgets.py": "intake/test_budgets.py",
    "core/pricing.py": "evaluations/test_metrics.py (a run's cost), intake/test_budgets.py",
    "monitoring/collector.py": "monitoring/test_endpoint.py, through /metrics",
    "outcome/results.py": "api/test_judgement_endpoints.py, api/test_vote_changes.py",
    "evaluations/tryout.py": "web/test_judgement_pages.py (the one-click examples)",
    "web/certificates.py": "web/test_trust_pages.py (certifying a panel from its page)",
    "web/history_pages.py": "web/test_history.py",
    "web/new_judgement_page.py": "web/test_judgement_pages.py, web/test_panel_pages.py",
    "web/review_pages.py": "outcome/test_reviews.py, outcome/test_overrides.py",
    "web/run_pages.py": "web/test_evaluation_pages.py",
    "web/run_report.py": "web/test_evaluation_pages.py",
    "web/run_report_shapes.py": "shapes only (TypedDicts): web/test_evaluation_pages.py",
    "web/security.py": "security/test_headers.py, security/test_websocket.py",
    "web/site_pages.py": "web/test_fast_lane.py (/healthz), the browser tests (log out)",
    "web/suite_pages.py": "web/test_evaluation_pages.py",
    "audit/facts.py": "shapes only; audit/test_verification.py writes each kind and reads it back",
    "audit/record.py": "audit/test_verification.py, audit/test_log.py",
    "audit/row_checks.py": "audit/test_verification.py (each way of tampering)",
    "outcome/receipt_answers.py": "audit/test_receipts.py, api/test_openapi.py",
    "models/chain.py": "audit/test_log.py, audit/test_sequencer.py, audit/test_verification.py",
    "audit/proofs.py": "audit/test_sequencer.py (every proof served checks)",
    "audit/tree_checks.py": "audit/test_verification.py (truncation, rewriting, keys)",
    "audit/receipt_checks.py": "audit/test_verification.py (a status flip, a backdated override)",
    "audit/coverage.py": "audit/test_verification.py (rows added, replies edited)",
    "outcome/checkpoints.py": "audit/test_sequencer.py (the directory, the webhook event)",
    "api/log_endpoints.py": "audit/test_sequencer.py (the log endpoints)",
    "management/commands/audit.py": "audit/test_verification.py (verify), audit/test_keys.py",
}


def modules_with_logic() -> list[str]:
    """judgements/ modules that define a function or a class; migrations, packages'
    __init__ and the app's config aside."""
    found = []
    for path in sorted(APP.rglob("*.py")):
        module = path.relative_to(APP).as_posix()
        if module.startswith("migrations/") or path.name in ("__init__.py", "apps.py"):
            continue
        tree = ast.parse(path.read_text(), str(path))
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        if any(isinstance(node, kinds) for node in tree.body):
            found.append(module)
    return found


def mirror_of(module: str) -> Path:
    path = Path(module)
    return TESTS / path.parent / f"test_{path.stem}.py"


def test_every_module_with_logic_has_its_mirroring_test_module():
    missing = [
        f"{module}: tests/judgements/{mirror_of(module).relative_to(TESTS)}"
        for module in modules_with_logic()
        if not mirror_of(module).exists() and module not in UNMIRRORED
    ]
    assert missing == [], "write the test module, or list the module in UNMIRRORED with why"


def test_the_allow_list_names_only_modules_still_without_their_test_module():
    with_logic = set(modules_with_logic())
    stale = [m for m in UNMIRRORED if m not in with_logic or mirror_of(m).exists()]
    assert stale == [], "these have their test module now (or are gone): remove them"


def test_bench_imports_from_the_tests_only_what_tests_support_shares():
    borrowed = []
    for path in sorted((ROOT / "bench").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            borrowed += [
                f"{path.name}: {name}"
                for name in names
                if name.split(".")[0] == "tests"
                and name != "tests.support"
                and not name.startswith("tests.support.")
            ]
    assert borrowed == []


def test_no_test_module_imports_another():
    """What two test modules share lives in tests/support/ (or a conftest.py fixture)."""
    borrowed = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] if node.level == 0 else [f"relative {node.module}"]
                names += [f"{node.module}.{alias.name}" for alias in node.names]
            borrowed += [
                f"{path.relative_to(ROOT)}: {name}"
                for name in names
                if name.rsplit(".", 1)[-1].startswith("test_") or name.startswith("relative ")
            ]
    assert borrowed == []
