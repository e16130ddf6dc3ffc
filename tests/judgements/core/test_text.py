import json

import pytest

from judgements.core import text
from tests.support.inputs import PROMPT_ESCAPES


@pytest.mark.parametrize("value", PROMPT_ESCAPES)
def test_one_line_json_is_one_line_read_back_exactly(value):
    literal = text.one_line_json(value)
    assert json.loads(literal) == value
    # No character Python breaks a line at is left in it, U+2028 and NEL included.
    assert literal.splitlines() == [literal]


def test_one_line_json_keeps_every_language_as_it_is():
    assert text.one_line_json("Änderung für Zürich: 部署") == '"Änderung für Zürich: 部署"'
