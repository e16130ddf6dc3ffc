"""What the run pages show of a run's report, named once: the tables' rows of text, the
charts, the certificate of the run's panel, and two runs side by side. web/run_report.py
builds them (it is at its size); the run and compare pages' templates read them."""

from typing import TypedDict

from judgements.evaluations import charts, runs
from judgements.evaluations.run_reports import RunReport
from judgements.models import EvaluationRun, Panel
from judgements.web import certificates


class FigureRow(TypedDict):
    label: str
    value: str


class AgentRow(TypedDict):
    name: str
    values: list[str]  # in run_report.AGENT_FIGURES' order


class ConfidenceRow(TypedDict):
    source: str
    known: str
    auroc: str


class SideBySideRow(TypedDict):
    """A figure of the panel beside the plain call's; `better`: "higher" or "lower"."""

    label: str
    better: str
    panel: str
    plain: str


class PlainCallTable(TypedDict):
    """The panel and the plain call side by side (`plain_call_table`)."""

    rows: list[SideBySideRow]
    verdict: str
    model: str
    compared: int
    missing: int


class PerCriterionTable(TypedDict):
    """The agents and the panel beside a plain call on each criterion
    (`per_criterion_table`)."""

    rows: list[SideBySideRow]
    compared: int
    missing: int


class ReportTables(TypedDict):
    """A run's report as the run page's tables show it (`report_tables`)."""

    figures: list[FigureRow]
    agents: list[AgentRow]
    agent_headings: list[str]
    plain_call: PlainCallTable | None
    per_criterion: PerCriterionTable | None
    confidence: list[ConfidenceRow]
    # Headline figure ("trust_coverage") -> its text.
    headline: dict[str, str]


class RunCertificate(TypedDict):
    """The certificate of a run's saved panel as the run page shows it (`run_certificate`)."""

    panel: Panel
    view: certificates.CertificateView
    chart: certificates.CurveChart | None
    from_this_run: bool
    same_agents: bool
    check: certificates.CheckWords | None


class ReportCharts(TypedDict):
    heat_map: charts.HeatMap
    per_round: charts.BarChart
    per_agent: charts.BarChart
    trust: charts.BarChart


class Side(TypedDict):
    """One run of two compared: its progress, and once done its report as tables and
    charts."""

    letter: str
    run: EvaluationRun
    progress: runs.Progress
    progress_text: str
    report: RunReport | None
    tables: ReportTables | None
    charts: ReportCharts | None
    certificate: RunCertificate | None


class ComparedRow(TypedDict):
    label: str
    a: str
    b: str
    difference: str


class Compared(TypedDict):
    """Two runs side by side, as the compare page shows them (`compared`)."""

    run_a: EvaluationRun
    run_b: EvaluationRun
    sides: list[Side]
    rows: list[ComparedRow]
    ratios: charts.BarChart | None
    changed_cases: list[str]
