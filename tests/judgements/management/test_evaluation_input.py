"""What `manage.py evaluate` is given (judgements/management/evaluation_input.py): each
option read and checked, every error named by its option or field, nothing guessed (the
command's refusals end to end: management/commands/test_evaluate.py)."""

import json

import pytest

from judgements.core.errors import InvalidInput
from judgements.evaluations import runs
from judgements.management import evaluation_input
from tests.support.evaluations import AGENTS


@pytest.mark.parametrize("value", ["0", "x", "1.5", "²", str(runs.MAX_REPEATS + 1)])
def test_repeat_must_be_a_whole_number_in_range(value):
    errors: dict[str, list[str]] = {}
    evaluation_input.parse_repeat(value, errors)
    assert list(errors) == ["repeat"]


def test_a_good_repeat_is_read_as_a_number():
    errors: dict[str, list[str]] = {}
    assert evaluation_input.parse_repeat("3", errors) == 3
    assert errors == {}


def test_target_and_delta_lie_strictly_between_0_and_1():
    good = evaluation_input.certify_options({"target": "0.9", "delta": "0.1"})
    assert good == (0.9, 0.1)
    with pytest.raises(InvalidInput) as refused:
        evaluation_input.certify_options({"target": "1", "delta": "abc"})
    assert sorted(refused.value.errors) == ["delta", "target"]


def test_a_panel_file_must_hold_an_object(tmp_path):
    path = tmp_path / "panel.json"
    path.write_text("[]")
    errors: dict[str, list[str]] = {}
    assert evaluation_input.read_panel(str(path), errors) == (None, [], "")
    assert list(errors) == ["panel"]


def test_a_panel_file_names_each_unknown_field_and_a_missing_name(tmp_path, fake_llm):
    path = tmp_path / "panel.json"
    path.write_text(json.dumps({"agents": AGENTS, "colour": "blue"}))
    errors: dict[str, list[str]] = {}
    panel, agents, name = evaluation_input.read_panel(str(path), errors)
    assert (panel, agents, name) == (None, AGENTS, "")
    assert sorted(errors) == ["panel.colour", "panel.name"]
