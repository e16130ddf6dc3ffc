"""The report's shapes (judgements/evaluations/report_figures.py, run_reports.RunReport,
plain_call's comparisons) name the keys the code builds and the API's answer validates
(evaluations/answers.py): the type checker holds the code to the TypedDicts, these tests
hold the TypedDicts to the API's models, which nothing else compares them with."""

import pytest

from judgements.evaluations import answers, plain_call, report_figures, run_reports, runs
from tests.support.evaluations import REPORT_KEYS, RUN_REPORT_KEYS

# Each shape beside the API's model of it.
SHAPES = [
    (run_reports.RunReport, answers.Report),
    (report_figures.AgentFigures, answers.AgentReport),
    (report_figures.Deliberation, answers.Deliberation),
    (report_figures.Trust, answers.Trust),
    (report_figures.TrustLevel, answers.TrustLevel),
    (report_figures.Separation, answers.Separation),
    (plain_call.Proportion, answers.Proportion),
    (plain_call.PlainCallComparison, answers.PlainCallComparison),
    (plain_call.AgentsAgainstPlain, answers.AgentsAgainstPlain),
    (plain_call.PerCriterionComparison, answers.PerCriterionComparison),
    (runs.Progress, answers.Progress),
    (runs.RoundProgress, answers.RoundProgress),
]


@pytest.mark.parametrize(("shape", "model"), SHAPES, ids=lambda s: s.__name__)
def test_each_shape_has_the_keys_of_the_apis_model(shape, model):
    assert sorted(shape.__required_keys__) == sorted(model.model_fields)
    assert not shape.__optional_keys__


def test_the_figures_are_the_reports_keys_in_its_order():
    assert list(report_figures.Figures.__annotations__) == REPORT_KEYS
    assert list(run_reports.RunReport.__annotations__) == RUN_REPORT_KEYS


def test_a_chart_reads_only_keys_of_the_report():
    read = {
        report_figures.ChartedReport: report_figures.Figures,
        report_figures.ChartedAgent: report_figures.AgentFigures,
        report_figures.ChartedTrust: report_figures.Trust,
    }
    for view, whole in read.items():
        assert set(view.__annotations__) <= set(whole.__annotations__), view.__name__
