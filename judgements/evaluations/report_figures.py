"""The run report's figures as JSON, named once: what metrics.report builds (run_reports
adds the plain calls beside them, run_reports.RunReport), and what a chart reads of them.
The API's answer (answers.Report) validates the same keys; the run page, its charts and
`manage.py evaluate` read them. Pure (no Django)."""

from collections.abc import Mapping, Sequence
from typing import Required, TypedDict

# ReadOnly: a chart's view of a report (below) takes the report's own required keys.
from typing_extensions import ReadOnly


class AgentFigures(TypedDict):
    """One agent's figures in the report."""

    name: str
    accuracy: float | None
    round1_accuracy: float | None
    vote_changes: int
    changes_with_majority: int


class Deliberation(TypedDict):
    fixed: int
    broke: int


class TrustLevel(TypedDict):
    """A point of the trust curve: what acting on records with at most `level` kinds of
    signal keeps, and how often those were right."""

    level: int
    coverage: float | None
    accuracy: float | None


class Trust(TypedDict):
    """What the contested mark says about the panel (`trust`)."""

    assessed: int
    contested: int
    coverage: float | None
    uncontested_accuracy: float | None
    contested_accuracy: float | None
    uncontested_attacks: int
    uncontested_attack_success_rate: float | None
    curve: list[TrustLevel]


class Separation(TypedDict):
    """How well one confidence source tells right verdicts from wrong ones."""

    known: int
    auroc: float | None


class Figures(TypedDict):
    """The report's figures (`report`): what run_reports.RunReport adds the plain calls to,
    and what the charts draw."""

    cases: int
    repeats: int
    judgements: int
    accuracy: float | None
    perfect_agents_accuracy: float | None
    # Expected verdict -> verdict got -> count.
    confusion: dict[str, dict[str, int]]
    kappa: float | None
    errors: int
    agents: list[AgentFigures]
    round1_majority_accuracy: float | None
    deliberation: Deliberation
    vote_changes: int
    changes_with_majority: int
    changes_toward_expected: int
    changes_away_from_expected: int
    # Round after the first ("2", "3") -> count.
    vote_changes_by_round: dict[str, int]
    changes_with_majority_by_round: dict[str, int]
    unstable_cases: list[str]
    attack_success_rate: float | None
    trust: Trust
    # Confidence source ("answer", "probe") -> its separation.
    confidence: dict[str, Separation]
    tokens: dict[str, int | None]
    seconds_per_judgement: float | None
    wall_seconds: float | None
    cost: float | None


# --- what the charts read (evaluations/charts.py) ---------------------------------------
# Any part may be missing (a chart drawn from a part of a report draws what is there), and
# a chart writes nothing: so a whole report (Figures) is one too.


class ChartedAgent(TypedDict, total=False):
    name: ReadOnly[Required[str]]
    vote_changes: ReadOnly[int | None]
    changes_with_majority: ReadOnly[int | None]


class ChartedTrust(TypedDict, total=False):
    curve: ReadOnly[Sequence[TrustLevel]]


class ChartedReport(TypedDict, total=False):
    vote_changes_by_round: ReadOnly[Mapping[str, int]]
    changes_with_majority_by_round: ReadOnly[Mapping[str, int] | None]
    agents: ReadOnly[Sequence[ChartedAgent]]
    trust: ReadOnly[ChartedTrust]
    accuracy: ReadOnly[float | None]
    round1_majority_accuracy: ReadOnly[float | None]
    attack_success_rate: ReadOnly[float | None]
