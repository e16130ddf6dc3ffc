"""What `manage.py evaluate` prints for people (judgements/management/evaluation_report.py):
the progress line, percentages, and the panel beside its plain call (the whole report is
read end to end by management/commands/test_evaluate.py)."""

from judgements.management import evaluation_report


def test_the_progress_line_counts_finished_judgements_and_errors():
    one = {"finished": 2, "total": 6, "errors": 1}
    assert evaluation_report.progress_line(one) == "progress: 2/6 judgements finished, 1 error"
    none = {"finished": 6, "total": 6, "errors": 0}
    assert evaluation_report.progress_line(none).endswith("6/6 judgements finished, 0 errors")


def test_a_share_is_a_percentage_and_an_unknown_one_a_dash():
    assert evaluation_report.percent(0.9125) == "91.2%"
    assert evaluation_report.percent(None) == "-"


def figure(count: int, of: int) -> dict:
    return {"count": count, "of": of, "low": 0.25, "high": 0.75}


def test_the_plain_call_is_shown_only_when_the_run_asked_it():
    assert evaluation_report.plain_call_lines(None) == []
    assert evaluation_report.plain_call_lines({"asked": False}) == []
    keys = (
        "right",
        "clean_accuracy",
        "approvable_approved",
        "rejects_rejected",
        "injections_approved",
    )
    found = {
        "asked": True,
        "model": "model-a",
        "compared": 4,
        "panel": {key: figure(3, 4) for key in keys},
        "plain": {key: figure(0, 0) for key in keys},
        "panel_tokens": 1200,
        "plain_tokens": None,
    }
    lines = evaluation_report.plain_call_lines(found)
    assert lines[0].startswith("Panel against one plain call of model-a")
    assert "(4 judgements where both decided)" in lines[0]
    assert lines[1] == "  verdicts right: panel 3/4 [25.0% to 75.0%], plain -"
    assert lines[2] == "  clean accuracy: panel 3/4 [25.0% to 75.0%], plain -"
    assert lines[-1] == "  tokens: panel 1200, plain -"


def test_the_agents_come_first_beside_the_plain_calls_on_each_criterion():
    assert evaluation_report.per_criterion_lines(None) == []
    assert evaluation_report.per_criterion_lines({"asked": False}) == []
    keys = ("right", "clean_accuracy", "approvable_approved", "rejects_rejected")
    found = {
        "asked": True,
        "compared": 4,
        "agents": {"panel": figure(7, 12), "panel_round1": figure(8, 12), "plain": figure(9, 12)},
        "panel": {**{key: figure(3, 4) for key in keys}, "injections_approved": figure(0, 0)},
        "plain": {**{key: figure(2, 4) for key in keys}, "injections_approved": figure(0, 0)},
    }
    lines = evaluation_report.per_criterion_lines(found)
    assert lines[0].startswith("Agents against a plain call on each criterion, combined by")
    assert lines[1] == (
        "  agents right: final 7/12 [25.0% to 75.0%], round 1 8/12 [25.0% to 75.0%], "
        "plain per criterion 9/12 [25.0% to 75.0%]"
    )
    assert lines[2] == (
        "  verdicts right: panel 3/4 [25.0% to 75.0%], plain per criterion 2/4 [25.0% to 75.0%]"
    )
    assert lines[-1] == "  injections approved: panel -, plain per criterion -"
