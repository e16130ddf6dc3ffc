"""What `manage.py evaluate` prints for people (judgements/management/evaluation_report.py):
the progress line, percentages, and the panel beside its plain call (the whole report is
read end to end by management/commands/test_evaluate.py)."""

from judgements.evaluations.plain_call import (
    PerCriterionComparison,
    PlainCallComparison,
    Proportion,
)
from judgements.evaluations.runs import Progress
from judgements.management import evaluation_report

KEYS = ("right", "clean_accuracy", "approvable_approved", "rejects_rejected")


def progress(finished: int, total: int, errors: int) -> Progress:
    return {
        "total": total,
        "finished": finished,
        "errors": errors,
        "running": 0,
        "done": finished == total,
        "rounds": [],
        "seconds_left": None,
    }


def test_the_progress_line_counts_finished_judgements_and_errors():
    one = progress(2, 6, 1)
    assert evaluation_report.progress_line(one) == "progress: 2/6 judgements finished, 1 error"
    none = progress(6, 6, 0)
    assert evaluation_report.progress_line(none).endswith("6/6 judgements finished, 0 errors")


def test_a_share_is_a_percentage_and_an_unknown_one_a_dash():
    assert evaluation_report.percent(0.9125) == "91.2%"
    assert evaluation_report.percent(None) == "-"


def figure(count: int, of: int) -> Proportion:
    return {"count": count, "of": of, "ratio": None, "low": 0.25, "high": 0.75}


def plain_call(asked: bool) -> PlainCallComparison:
    return {
        "asked": asked,
        "model": "model-a",
        "compared": 4,
        "plain_missing": 0,
        "panel": {key: figure(3, 4) for key in (*KEYS, "injections_approved")},
        "plain": {key: figure(0, 0) for key in (*KEYS, "injections_approved")},
        "panel_clean_margin": 3,
        "panel_tokens": 1200,
        "plain_tokens": None,
    }


def per_criterion(asked: bool) -> PerCriterionComparison:
    return {
        "asked": asked,
        "compared": 4,
        "plain_missing": 0,
        "agents": {"panel": figure(7, 12), "panel_round1": figure(8, 12), "plain": figure(9, 12)},
        "panel": {**{key: figure(3, 4) for key in KEYS}, "injections_approved": figure(0, 0)},
        "plain": {**{key: figure(2, 4) for key in KEYS}, "injections_approved": figure(0, 0)},
        "panel_tokens": None,
        "plain_tokens": None,
    }


def test_the_plain_call_is_shown_only_when_the_run_asked_it():
    assert evaluation_report.plain_call_lines(None) == []
    assert evaluation_report.plain_call_lines(plain_call(asked=False)) == []
    lines = evaluation_report.plain_call_lines(plain_call(asked=True))
    assert lines[0].startswith("Panel against one plain call of model-a")
    assert "(4 judgements where both decided)" in lines[0]
    assert lines[1] == "  verdicts right: panel 3/4 [25.0% to 75.0%], plain -"
    assert lines[2] == "  clean accuracy: panel 3/4 [25.0% to 75.0%], plain -"
    assert lines[-1] == "  tokens: panel 1200, plain -"


def test_the_agents_come_first_beside_the_plain_calls_on_each_criterion():
    assert evaluation_report.per_criterion_lines(None) == []
    assert evaluation_report.per_criterion_lines(per_criterion(asked=False)) == []
    lines = evaluation_report.per_criterion_lines(per_criterion(asked=True))
    assert lines[0].startswith("Agents against a plain call on each criterion, combined by")
    assert lines[1] == (
        "  agents right: final 7/12 [25.0% to 75.0%], round 1 8/12 [25.0% to 75.0%], "
        "plain per criterion 9/12 [25.0% to 75.0%]"
    )
    assert lines[2] == (
        "  verdicts right: panel 3/4 [25.0% to 75.0%], plain per criterion 2/4 [25.0% to 75.0%]"
    )
    assert lines[-1] == "  injections approved: panel -, plain per criterion -"
