"""The API's site (judgements/api/site.py): each operation's body model is read from its
view's own signature, so importing an endpoint module registers nothing by side effect."""

import ast
from pathlib import Path

from judgements.api import config_schemas, evaluation_schemas, schemas, site, slack_schemas
from judgements.intake.schemas import CaseWithCallback

API = Path(site.__file__).parent


def test_each_body_model_is_read_from_its_views_signature():
    # urls.py adds the routers; the site's own URLconf has imported it.
    assert site.body_models() == {
        ("api-judgements", "POST"): CaseWithCallback,
        ("api-override", "POST"): schemas.OverrideRequest,
        ("api-confirm", "POST"): schemas.ConfirmRequest,
        ("api-evaluations", "POST"): evaluation_schemas.EvaluationRequest,
        # Django resolves the path to GET's name, whatever the method.
        ("read_certificate", "POST"): evaluation_schemas.CertifyRequest,
        ("api-certify", "POST"): evaluation_schemas.CertifyRequest,
        ("read_cascade_certificate", "POST"): evaluation_schemas.CertifyCascadeRequest,
        ("api-certify-cascade", "POST"): evaluation_schemas.CertifyCascadeRequest,
        ("api-panels", "POST"): config_schemas.PanelWrite,
        ("api-panel", "PUT"): config_schemas.PanelWrite,
        ("api-budgets", "POST"): config_schemas.BudgetWrite,
        ("api-budget", "PUT"): config_schemas.BudgetWrite,
        ("api-teams", "POST"): config_schemas.TeamWrite,
        ("api-team", "PUT"): config_schemas.TeamWrite,
        ("api-users", "POST"): config_schemas.UserCreate,
        ("api-tokens", "POST"): config_schemas.TokenCreate,
        ("api-batch", "POST"): config_schemas.BatchRequest,
        ("api-batch-parts", "POST"): config_schemas.BatchPartWrite,
        ("api-team-slack", "PUT"): slack_schemas.SlackWrite,
    }


def module_level_stores(source: str) -> list[str]:
    """Assignments, at import, into something other than a name of the module's own:
    `REGISTRY[key] = ...` or `other.attribute = ...`."""
    found = []
    for statement in ast.parse(source).body:
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        if isinstance(statement, ast.AugAssign | ast.AnnAssign):
            targets = [statement.target]
        found += [
            f"line {statement.lineno}: {ast.unparse(target)}"
            for target in targets
            if isinstance(target, ast.Subscript | ast.Attribute)
        ]
    return found


def test_no_api_module_registers_anything_when_imported():
    found = {
        path.name: stores
        for path in sorted(API.glob("*.py"))
        if (stores := module_level_stores(path.read_text()))
    }
    assert found == {}
    assert module_level_stores('BODY_MODELS["api-x"] = Case\n')
    assert module_level_stores("site.handlers += [handler]\n")
    assert not module_level_stores("ERRORS = {401: Error}\n")
