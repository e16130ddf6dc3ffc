"""Values as CSV cells (judgements/core/csv_cells.py): a would-be formula kept as text, a
flag as yes, no or blank."""

import pytest

from judgements.core.csv_cells import spreadsheet_safe, yes_no


@pytest.mark.parametrize("value", ["=1+1", "+33 1 23", "-2", "@SUM(A1)", "\tx", "\rx"])
def test_a_cell_a_spreadsheet_would_run_is_kept_as_text(value):
    assert spreadsheet_safe(value) == "'" + value


@pytest.mark.parametrize("value", ["", "Trip to Japan", "a=b", "1-2", "'=already"])
def test_any_other_cell_is_left_as_it_is(value):
    assert spreadsheet_safe(value) == value


def test_a_flag_reads_yes_no_or_blank_while_unknown():
    assert [yes_no(True), yes_no(False), yes_no(None)] == ["yes", "no", ""]
