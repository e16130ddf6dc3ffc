"""The charts' geometry (judgements/evaluations/charts.py): pure functions of a report."""

import pytest

from judgements.evaluations import charts

CONFUSION = {"approve": {"approve": 12, "reject": 3}, "reject": {"approve": 1, "reject": 0}}


def cell(heat_map: charts.HeatMap, expected: str, got: str) -> charts.HeatCell:
    return next(c for c in heat_map.cells if (c.expected, c.got) == (expected, got))


def test_the_heat_map_has_a_cell_per_expected_and_got_verdict_with_its_count():
    heat_map = charts.confusion_heat_map(CONFUSION)
    assert [(c.expected, c.got, c.count) for c in heat_map.cells] == [
        ("approve", "approve", 12),
        ("approve", "reject", 3),
        ("reject", "approve", 1),
        ("reject", "reject", 0),
    ]
    # Expected verdicts in rows, the panel's in columns, cells side by side.
    assert cell(heat_map, "approve", "reject").x == cell(heat_map, "approve", "approve").x + 140
    assert cell(heat_map, "reject", "approve").y == cell(heat_map, "approve", "approve").y + 96
    assert heat_map.width >= max(c.x + c.width for c in heat_map.cells)
    assert heat_map.height >= max(c.y + c.height for c in heat_map.cells)


def test_a_heat_map_cell_is_green_when_right_red_when_wrong_and_grows_with_its_row_share():
    heat_map = charts.confusion_heat_map(CONFUSION)
    # All of its row: full green when right, full red when wrong; none: the panel colour.
    assert cell(heat_map, "reject", "approve").fill == "#9b2c2c"  # wrong · 100 %
    assert cell(heat_map, "reject", "reject").fill == "#1b2633"  # correct · 0 %
    assert cell(heat_map, "approve", "approve").fill == charts.mix(
        charts.HEAT_LOW, charts.HEAT_RIGHT, 12 / 15
    )
    assert cell(heat_map, "approve", "reject").fill == charts.mix(
        charts.HEAT_LOW, charts.HEAT_WRONG, 3 / 15
    )
    # "wrong · 100 %" no longer looks like "correct · 100 %".
    full = charts.confusion_heat_map({"approve": {"approve": 5}, "reject": {"approve": 5}})
    assert cell(full, "approve", "approve").fill != cell(full, "reject", "approve").fill


def test_every_heat_map_cell_says_in_words_whether_it_is_right_and_its_row_share():
    heat_map = charts.confusion_heat_map(CONFUSION)
    assert cell(heat_map, "approve", "approve").note == "correct · 80 %"
    assert cell(heat_map, "approve", "reject").note == "wrong · 20 %"
    assert cell(heat_map, "reject", "approve").note == "wrong · 100 %"
    assert cell(heat_map, "reject", "reject").note == "correct · 0 %"
    assert "Expected approve, got reject: 3 (wrong · 20 %)." in heat_map.description
    assert [label.text for label in heat_map.labels] == [
        "Panel's verdict",
        "got approve",
        "got reject",
        "expected approve",
        "expected reject",
    ]


def test_an_empty_row_says_so_and_an_empty_matrix_stays_dark():
    heat_map = charts.confusion_heat_map({})
    assert {c.count for c in heat_map.cells} == {0}
    assert {c.fill for c in heat_map.cells} == {"#1b2633"}
    assert {c.note.split(" · ")[1] for c in heat_map.cells} == {"no cases"}


@pytest.mark.parametrize("count", [0, 1, 2, 3, 5, 8, 12])
def test_the_text_on_every_cell_meets_the_wcag_contrast_for_text(count):
    heat_map = charts.confusion_heat_map(
        {"approve": {"approve": 12, "reject": count}, "reject": {"approve": 0, "reject": 0}}
    )
    for heat_cell in heat_map.cells:
        assert charts.contrast(heat_cell.text_fill, heat_cell.fill) >= 4.5, heat_cell


def test_contrast_is_the_wcag_ratio():
    assert charts.contrast("#000000", "#ffffff") == pytest.approx(21)
    assert charts.contrast("#777777", "#777777") == pytest.approx(1)
    assert charts.text_colour_on("#ffffff") == charts.DARK_TEXT
    assert charts.text_colour_on("#000000") == charts.LIGHT_TEXT


def test_bars_are_as_long_as_their_values_and_name_their_series_and_value():
    chart = charts.bar_chart(
        "Votes",
        "Some votes.",
        [
            ("Round 2", [charts.count_row("changed", 4), charts.count_row("kept", 2)]),
            ("Round 3", [charts.count_row("changed", 0), charts.count_row("kept", None)]),
        ],
    )
    round_2, round_3 = chart.groups
    changed, kept = round_2.bars
    assert changed.width == charts.BAR_SPAN  # the largest value spans the chart
    assert kept.width == charts.BAR_SPAN / 2
    assert round_3.bars[0].width == 0 and round_3.bars[0].value_label == "0"
    assert round_3.bars[1].width == 0 and round_3.bars[1].value_label == "n/a"
    # Named on the left, the value written just after the bar's end.
    assert (changed.label.text, changed.label.anchor) == ("changed", "end")
    assert changed.label.x < changed.x
    assert changed.value_text.x == changed.x + changed.width + 6
    assert kept.value_text.text == "2"
    # Rows go down the chart, the group's name above its bars.
    assert round_2.label.y < changed.y < kept.y < round_3.label.y < round_3.bars[0].y
    assert chart.height >= round_3.bars[1].y + round_3.bars[1].height
    assert changed.fill != kept.fill
    assert chart.description == (
        "Some votes. Round 2: changed: 4, kept: 2. Round 3: changed: 0, kept: n/a."
    )


def test_a_ratio_chart_spans_zero_to_one_whatever_the_values():
    chart = charts.ratios_side_by_side(
        {"accuracy": 0.5, "round1_majority_accuracy": 0.25, "attack_success_rate": None},
        {"accuracy": 0.75, "round1_majority_accuracy": 0.5, "attack_success_rate": 0.125},
        "A (run 1)",
        "B (run 2)",
    )
    accuracy, _, attacks = chart.groups
    assert accuracy.label.text == "Accuracy"
    assert [bar.width for bar in accuracy.bars] == [charts.BAR_SPAN * 0.5, charts.BAR_SPAN * 0.75]
    assert [bar.value_label for bar in accuracy.bars] == ["50 %", "75 %"]
    assert [bar.series for bar in accuracy.bars] == ["A (run 1)", "B (run 2)"]
    assert [bar.value_label for bar in attacks.bars] == ["n/a", "12.5 %"]


def test_vote_changes_per_round_come_from_the_report():
    chart = charts.vote_changes_per_round({"vote_changes_by_round": {"2": 5, "3": 2}})
    assert [g.label.text for g in chart.groups] == ["Round 2", "Round 3"]
    assert [[b.value_label for b in g.bars] for g in chart.groups] == [["5"], ["2"]]
    assert chart.title == "Vote changes per round"
    with_majority = charts.vote_changes_per_round(
        {
            "vote_changes_by_round": {"2": 5, "3": 2},
            "changes_with_majority_by_round": {"2": 4, "3": 1},
        }
    )
    assert [[b.summary for b in g.bars] for g in with_majority.groups] == [
        ["vote changes: 5", "with the majority: 4"],
        ["vote changes: 2", "with the majority: 1"],
    ]


def test_vote_changes_per_agent_name_each_agent_and_shorten_long_names():
    long_name = "Casper " + "the Wise " * 10
    chart = charts.vote_changes_per_agent(
        {
            "agents": [
                {"name": "Melchior", "vote_changes": 3, "changes_with_majority": 2},
                {"name": long_name, "vote_changes": 1, "changes_with_majority": 0},
            ]
        }
    )
    melchior, casper = chart.groups
    assert melchior.label.text == "Melchior"
    assert [b.value_label for b in melchior.bars] == ["3", "2"]
    assert len(casper.label.text) == charts.GROUP_LABEL_MAX_CHARS
    assert casper.label.text.endswith("…")
    assert long_name in chart.description  # the whole name, for screen readers


def test_percent_writes_a_ratio_for_people():
    assert charts.percent(0.756) == "75.6 %"
    assert charts.percent(1.0) == "100 %"
    assert charts.percent(0) == "0 %"
    assert charts.percent(None) == "n/a"
