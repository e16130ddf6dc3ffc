"""What the evaluations' test modules share: a user's suite of tests/support/evaluations.py's
three labelled cases."""

import pytest

from judgements.evaluations import suites
from tests.support.evaluations import SUITE


@pytest.fixture
def suite(user):
    return suites.import_suite(name="Gate cases", description="", owner=user, data=SUITE)
