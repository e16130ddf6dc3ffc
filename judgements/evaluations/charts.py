"""The geometry of the evaluation report's charts: where every cell, bar and label goes
and what colour it is, from a report (judgements/evaluations/runs.py `report`).

Pure (no Django): the templates draw these as inline SVG
(templates/judgements/evaluation_chart_*.html). Every figure is written out as text in
the chart as well, so nothing is told by colour alone, and each chart carries a title and
a description for screen readers.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from judgements.evaluations.report_figures import ChartedReport

DECISIONS = ("approve", "reject")

# Heat-map cells run from the page's panel colour (none of the row) to a green for right
# verdicts and a red for wrong ones (all of the row), dark enough for light text at every
# share (WCAG AA): "wrong · 100 %" must not look like "correct · 100 %". Each cell also
# says "correct" or "wrong" in words.
HEAT_LOW = (0x1B, 0x26, 0x33)
HEAT_RIGHT = (0x1A, 0x74, 0x4A)
HEAT_WRONG = (0x9B, 0x2C, 0x2C)
DARK_TEXT = "#0b0f14"
LIGHT_TEXT = "#e6edf3"

# Bar colours by series (page theme: accent orange, thinking blue, approve green).
SERIES_FILLS = ("#ff9d2e", "#6cb6ff", "#2fbf71", "#f5c84c")


@dataclass(frozen=True)
class Text:
    x: float
    y: float
    text: str
    anchor: str = "middle"  # SVG text-anchor


@dataclass(frozen=True)
class HeatCell:
    x: float
    y: float
    width: float
    height: float
    fill: str
    text_fill: str
    count: int
    expected: str
    got: str
    correct: bool
    # "correct · 75 %": the verdict's share of the cases expected to be `expected`.
    note: str
    count_y: float
    note_y: float

    @property
    def centre_x(self) -> float:
        return self.x + self.width / 2

    @property
    def summary(self) -> str:
        return f"Expected {self.expected}, got {self.got}: {self.count} ({self.note})."


@dataclass(frozen=True)
class HeatMap:
    title: str
    description: str
    width: float
    height: float
    cells: tuple[HeatCell, ...]
    labels: tuple[Text, ...]


@dataclass(frozen=True)
class Bar:
    series: str
    value: float
    value_label: str
    label: Text  # the series name, left of the bar
    x: float
    y: float
    width: float
    height: float
    fill: str
    value_text: Text  # the value, right of the bar's end

    @property
    def summary(self) -> str:
        return f"{self.series}: {self.value_label}"


@dataclass(frozen=True)
class BarGroup:
    name: str
    label: Text  # the name, shortened to fit
    bars: tuple[Bar, ...]

    @property
    def summary(self) -> str:
        return f"{self.name}: " + ", ".join(bar.summary for bar in self.bars) + "."


@dataclass(frozen=True)
class BarChart:
    title: str
    description: str
    width: float
    height: float
    groups: tuple[BarGroup, ...]
    # The zero line the bars grow from.
    axis_x: float
    axis_top: float
    axis_bottom: float


# --- colour --------------------------------------------------------------------------


def mix(low: tuple[int, int, int], high: tuple[int, int, int], share: float) -> str:
    """The colour `share` (0..1) of the way from low to high, as #rrggbb."""
    share = min(max(share, 0.0), 1.0)
    channels = (round(a + (b - a) * share) for a, b in zip(low, high, strict=True))
    return "#" + "".join(f"{c:02x}" for c in channels)


def relative_luminance(colour: str) -> float:
    """WCAG 2 relative luminance of #rrggbb."""

    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two #rrggbb colours (1 to 21)."""
    high, low = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def text_colour_on(fill: str) -> str:
    """Dark or light text, whichever reads better on the fill."""
    return DARK_TEXT if contrast(DARK_TEXT, fill) >= contrast(LIGHT_TEXT, fill) else LIGHT_TEXT


# --- the confusion matrix as a heat map ----------------------------------------------

HEAT_LEFT = 150  # room for the row labels
HEAT_TOP = 56  # room for the column labels
CELL_WIDTH = 140
CELL_HEIGHT = 96


def percent(share: float | None) -> str:
    """0.756 -> "75.6 %"; None (undefined) -> "n/a"."""
    if share is None:
        return "n/a"
    return f"{share * 100:.1f}".removesuffix(".0") + " %"


def confusion_heat_map(confusion: Mapping[str, Mapping[str, int]]) -> HeatMap:
    """Expected verdicts in rows, the panel's verdicts in columns; a cell's colour says
    right (green) or wrong (red) and grows with its share of the row, and its text says
    the count, right or wrong, and its row share."""
    counts = {
        (expected, got): int((confusion.get(expected) or {}).get(got) or 0)
        for expected in DECISIONS
        for got in DECISIONS
    }
    cells = []
    for row, expected in enumerate(DECISIONS):
        row_total = sum(counts[(expected, got)] for got in DECISIONS)
        for column, got in enumerate(DECISIONS):
            count = counts[(expected, got)]
            correct = expected == got
            high = HEAT_RIGHT if correct else HEAT_WRONG
            fill = mix(HEAT_LOW, high, count / row_total if row_total else 0.0)
            share = percent(count / row_total) if row_total else "no cases"
            x = HEAT_LEFT + column * CELL_WIDTH
            y = HEAT_TOP + row * CELL_HEIGHT
            cells.append(
                HeatCell(
                    x=x,
                    y=y,
                    width=CELL_WIDTH,
                    height=CELL_HEIGHT,
                    fill=fill,
                    text_fill=text_colour_on(fill),
                    count=count,
                    expected=expected,
                    got=got,
                    correct=correct,
                    note=f"{'correct' if correct else 'wrong'} · {share}",
                    count_y=y + CELL_HEIGHT / 2 + 4,
                    note_y=y + CELL_HEIGHT / 2 + 28,
                )
            )
    labels = [Text(HEAT_LEFT + len(DECISIONS) * CELL_WIDTH / 2, 18, "Panel's verdict")]
    labels += [
        Text(HEAT_LEFT + (column + 0.5) * CELL_WIDTH, HEAT_TOP - 12, f"got {got}")
        for column, got in enumerate(DECISIONS)
    ]
    labels += [
        Text(HEAT_LEFT - 12, HEAT_TOP + (row + 0.5) * CELL_HEIGHT + 5, f"expected {exp}", "end")
        for row, exp in enumerate(DECISIONS)
    ]
    description = (
        "Finished judgements by expected verdict (rows) and the panel's verdict (columns). "
        + " ".join(cell.summary for cell in cells)
    )
    return HeatMap(
        title="Confusion matrix",
        description=description,
        width=HEAT_LEFT + len(DECISIONS) * CELL_WIDTH + 10,
        height=HEAT_TOP + len(DECISIONS) * CELL_HEIGHT + 10,
        cells=tuple(cells),
        labels=tuple(labels),
    )


# --- horizontal bars ----------------------------------------------------------------

BAR_CHART_WIDTH = 520
LABEL_RIGHT = 200  # series names end here; the bars start just after
BAR_LEFT = 210
BAR_SPAN = 250  # the longest bar; its value is written after it
GROUP_HEADER = 26
ROW_HEIGHT = 26
BAR_HEIGHT = 18
GROUP_GAP = 10

GROUP_LABEL_MAX_CHARS = 56  # in the chart's width, at its font size
SERIES_LABEL_MAX_CHARS = 24

Row = tuple[str, float | None, str]  # (series name, value, value as written)


def shorten(label: str, limit: int) -> str:
    """The label, cut to `limit` characters with an ellipsis (the full text is in the
    chart's description)."""
    return label if len(label) <= limit else label[: limit - 1] + "…"


def bar_chart(
    title: str,
    description: str,
    groups: Sequence[tuple[str, Sequence[Row]]],
    scale_max: float | None = None,
) -> BarChart:
    """Horizontal bars in labelled groups. Every bar is named on its left and its value
    written on its right; a value of None (undefined) draws no bar and says so. The
    longest bar stands for `scale_max` (by default the largest value)."""
    if scale_max is None:
        values = [value for _, rows in groups for _, value, _ in rows if value is not None]
        scale_max = max([*values, 0]) or 1
    y = 8.0
    built = []
    for group_label, rows in groups:
        header = Text(8, y + 17, shorten(group_label, GROUP_LABEL_MAX_CHARS), "start")
        y += GROUP_HEADER
        bars = []
        for index, (series, value, value_label) in enumerate(rows):
            width = 0.0 if value is None else BAR_SPAN * min(max(value, 0) / scale_max, 1)
            bar_y = y + (ROW_HEIGHT - BAR_HEIGHT) / 2
            text_y = y + ROW_HEIGHT / 2 + 5
            bars.append(
                Bar(
                    series=series,
                    value=value if value is not None else 0,
                    value_label=value_label,
                    label=Text(LABEL_RIGHT, text_y, shorten(series, SERIES_LABEL_MAX_CHARS), "end"),
                    x=BAR_LEFT,
                    y=bar_y,
                    width=round(width, 1),
                    height=BAR_HEIGHT,
                    fill=SERIES_FILLS[index % len(SERIES_FILLS)],
                    value_text=Text(BAR_LEFT + width + 6, text_y, value_label, "start"),
                )
            )
            y += ROW_HEIGHT
        built.append(BarGroup(name=group_label, label=header, bars=tuple(bars)))
        y += GROUP_GAP
    groups_built = tuple(built)
    summary = " ".join(group.summary for group in groups_built)
    return BarChart(
        title=title,
        description=f"{description} {summary}".strip(),
        width=BAR_CHART_WIDTH,
        height=y,
        groups=groups_built,
        axis_x=BAR_LEFT,
        axis_top=8 + GROUP_HEADER,
        axis_bottom=y - GROUP_GAP,
    )


def count_row(series: str, value: int | None) -> Row:
    return (series, value, "n/a" if value is None else str(value))


def ratio_row(series: str, share: float | None) -> Row:
    return (series, share, percent(share))


def vote_changes_per_round(report: ChartedReport) -> BarChart:
    """Per round 2 and 3: how many votes changed, and (when the report breaks it down by
    round) how many of those changes went with the majority of the previous round."""
    changes = report.get("vote_changes_by_round") or {}
    with_majority = report.get("changes_with_majority_by_round")
    groups = []
    for round_number in ("2", "3"):
        rows = [count_row("vote changes", changes.get(round_number, 0))]
        if with_majority is not None:
            rows.append(count_row("with the majority", with_majority.get(round_number, 0)))
        groups.append((f"Round {round_number}", rows))
    return bar_chart(
        "Vote changes per round",
        "How many agents' votes differed from their own vote in the round before.",
        groups,
    )


def vote_changes_per_agent(report: ChartedReport) -> BarChart:
    """Per agent: its vote changes, and of those how many went with the majority."""
    groups = [
        (
            agent["name"],
            [
                count_row("vote changes", agent.get("vote_changes")),
                count_row("with the majority", agent.get("changes_with_majority")),
            ],
        )
        for agent in report.get("agents") or []
    ]
    return bar_chart(
        "Vote changes per agent",
        "A change with the majority is a new vote equal to the vote both other agents "
        "gave in the round before.",
        groups,
    )


COMPARED_RATIOS: tuple[
    tuple[str, Literal["accuracy", "round1_majority_accuracy", "attack_success_rate"]], ...
] = (
    ("Accuracy", "accuracy"),
    ("Round-1 majority accuracy", "round1_majority_accuracy"),
    ("Attack success rate", "attack_success_rate"),
)


def ratios_side_by_side(
    report_a: ChartedReport, report_b: ChartedReport, name_a: str, name_b: str
) -> BarChart:
    """The headline ratios of two runs, bar beside bar."""
    groups = [
        (label, [ratio_row(name_a, report_a.get(key)), ratio_row(name_b, report_b.get(key))])
        for label, key in COMPARED_RATIOS
    ]
    return bar_chart(
        "Two runs side by side",
        f"Accuracy, round-1 majority accuracy and attack success rate of {name_a} and {name_b}.",
        groups,
        scale_max=1.0,
    )


def trust_curve(report: ChartedReport) -> BarChart:
    """Accuracy against coverage (evaluations/metrics.py `trust`): for each level, the share
    of judgements kept (those with at most that many kinds of contested signal) and how
    often the kept ones were right. Level 0 keeps only clean records."""
    points = (report.get("trust") or {}).get("curve") or []
    groups = [
        (
            f"Act on records with at most {point['level']} kind{'s' if point['level'] != 1 else ''}"
            " of signal",
            [ratio_row("coverage", point["coverage"]), ratio_row("accuracy", point["accuracy"])],
        )
        for point in points
    ]
    return bar_chart(
        "Accuracy against coverage",
        "Send judgements with more signals of doubt to a person: the fewer kept, the more "
        "often the rest are right.",
        groups,
        scale_max=1.0,
    )
