"""`manage.py certify_cascade` refuses what it cannot certify with exit 2, naming the
field (its end-to-end run, through evaluation runs, is tests/judgements/evaluations/
test_cascade.py)."""

import pytest

from judgements.models import Panel
from tests.support.commands import run_command

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def chain(fake_llm, make_panel):
    cheap, strong = make_panel(name="Cheap"), make_panel(name="Strong")
    Panel.objects.filter(pk=cheap.pk).update(escalate_to=strong)


def test_it_refuses_a_chain_whose_levels_share_no_run(chain):
    code, _, err = run_command("certify_cascade", "Cheap")
    assert code == 2 and "invalid input: runs: Run every panel of the chain" in err


def test_it_refuses_a_panel_that_escalates_nowhere(chain):
    code, _, err = run_command("certify_cascade", "Strong")
    assert code == 2 and "invalid input: panel:" in err


@pytest.mark.parametrize(("option", "value"), [("--target", "ninety"), ("--delta", "1.5")])
def test_it_refuses_a_bad_bound_naming_it(chain, option, value):
    code, _, err = run_command("certify_cascade", "Cheap", option, value)
    assert code == 2 and "invalid input:" in err
