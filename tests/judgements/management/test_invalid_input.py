"""The one way a command refuses bad input: a line per field, then exit 2."""

import io

import pytest
from django.core.management.base import OutputWrapper

from judgements.core.errors import InvalidInput
from judgements.management import invalid_input


def test_it_names_each_field_and_exits_2():
    written = io.StringIO()
    error = InvalidInput({"email": ["Not an address."], "username": ["Taken.", "Too long."]})
    with pytest.raises(SystemExit) as exit_:
        invalid_input.refuse(OutputWrapper(written), error)
    assert exit_.value.code == 2
    assert written.getvalue().splitlines() == [
        "invalid input: email: Not an address.",
        "invalid input: username: Taken. Too long.",
    ]
