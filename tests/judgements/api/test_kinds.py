"""Every kind of configuration the API serves (judgements/api/kinds.py), registered once
and in order; each kind's behaviour over HTTP is tested by its own module
(test_panel_endpoints.py, test_budget_endpoints.py, test_team_endpoints.py,
test_suite_endpoints.py)."""

from judgements.api import kinds, resources
from judgements.models import AuditSubject


def test_every_kind_is_registered_once_in_order():
    assert [kind.kind for kind in resources.registered()] == [
        "panel", "budget", "team", "suite", "user", "token"
    ]  # fmt: skip
    assert isinstance(next(resources.registered()), kinds.Panels)


def test_each_kind_s_changes_are_audited_under_its_own_subject():
    assert all(kind.audit == AuditSubject(kind.kind) for kind in resources.registered())
