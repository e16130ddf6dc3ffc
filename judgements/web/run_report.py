"""A run's report as the pages show it: the figures picked and formatted as tables, the
charts laid out (evaluations/charts.py), and two runs of one suite side by side."""

from collections.abc import Mapping

from judgements.evaluations import certify, charts, runs
from judgements.evaluations.plain_call import Proportion
from judgements.evaluations.run_reports import RunReport, RunsCompared
from judgements.models import EvaluationRun, agents_fingerprint
from judgements.web import certificates
from judgements.web.run_report_shapes import (
    Compared,
    ComparedRow,
    PerCriterionTable,
    PlainCallTable,
    ReportCharts,
    ReportTables,
    RunCertificate,
    Side,
    SideBySideRow,
)

# --- progress in words ----------------------------------------------------------------


def progress_text(progress: runs.Progress) -> str:
    """'12 of 32 judged, 1 error, 3 under way; about 4 min left'."""
    text = f"{progress['finished']} of {progress['total']} judged"
    errors = progress["errors"]
    if errors:
        text += f", {errors} error" + ("" if errors == 1 else "s")
    if progress["running"]:
        text += f", {progress['running']} under way"
    left = progress["seconds_left"]
    if left is not None:
        text += f"; about {duration(left)} left"
    return text


def duration(seconds: int) -> str:
    """'40 s', '4 min', '1 h 5 min': an estimate, so rounded."""
    if seconds < 60:
        return f"{seconds} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


# --- the report as tables and charts ---------------------------------------------------

PERCENT, COUNT, DECIMAL, SECONDS, DOLLARS = "percent", "count", "decimal", "seconds", "dollars"

# The report's figures in the order the tables show them: (label, key path, kind).
FIGURES = (
    ("Cases", "cases", COUNT),
    ("Repeats", "repeats", COUNT),
    ("Judgements", "judgements", COUNT),
    ("Errors (counted apart)", "errors", COUNT),
    ("Accuracy", "accuracy", PERCENT),
    ("Accuracy of perfect agents (the labels' ceiling)", "perfect_agents_accuracy", PERCENT),
    ("Cohen's kappa", "kappa", DECIMAL),
    ("Round-1 majority accuracy", "round1_majority_accuracy", PERCENT),
    ("Cases deliberation fixed", "deliberation.fixed", COUNT),
    ("Cases deliberation broke", "deliberation.broke", COUNT),
    ("Vote changes", "vote_changes", COUNT),
    ("Changes with the majority", "changes_with_majority", COUNT),
    ("Changes toward the expected vote", "changes_toward_expected", COUNT),
    ("Changes away from the expected vote", "changes_away_from_expected", COUNT),
    ("Unstable cases", "unstable_cases", COUNT),
    ("Attack success rate", "attack_success_rate", PERCENT),
    # The record's signals of doubt (metrics.trust), not the certified mark: a verdict
    # without a signal says "Not contested" only under the panel's certificate.
    ("With a doubt signal (a person should look)", "trust.contested", COUNT),
    ("Coverage (share without a doubt signal)", "trust.coverage", PERCENT),
    ("Accuracy without a doubt signal", "trust.uncontested_accuracy", PERCENT),
    ("Accuracy with a doubt signal", "trust.contested_accuracy", PERCENT),
    ("Attack success without a doubt signal", "trust.uncontested_attack_success_rate", PERCENT),
    ("Prompt tokens", "tokens.prompt", COUNT),
    ("Cached prompt tokens", "tokens.cached", COUNT),
    ("Completion tokens", "tokens.completion", COUNT),
    ("Mean time per judgement (claim to end)", "seconds_per_judgement", SECONDS),
    ("Run's wall time (first start to last end)", "wall_seconds", SECONDS),
    ("Cost", "cost", DOLLARS),
)

AGENT_FIGURES = (
    ("Accuracy", "accuracy", PERCENT),
    ("Round-1 accuracy", "round1_accuracy", PERCENT),
    ("Vote changes", "vote_changes", COUNT),
    ("With the majority", "changes_with_majority", COUNT),
)


def figure(report: Mapping[str, object], path: str) -> float | None:
    """A figure by its key path ("tokens.prompt"); a list counts its items. Every figure
    the tables name is a number, None (undefined) or a list."""
    value: object = report
    for key in path.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    if isinstance(value, list):
        return len(value)
    return value if isinstance(value, int | float) else None


def shown(value: float | None, kind: str) -> str:
    if value is None:
        return "n/a"
    if kind == PERCENT:
        return charts.percent(value)
    if kind == DECIMAL:
        return f"{value:.2f}"
    if kind == SECONDS:
        return f"{value:.1f} s"
    if kind == DOLLARS:
        return f"${value:.4f}"
    return f"{value:,}"


def difference(a: float | None, b: float | None, kind: str) -> str:
    """B minus A as a signed figure ("+12.5 points"), or "n/a" when either is undefined."""
    if a is None or b is None:
        return "n/a"
    delta = b - a
    if kind == PERCENT:
        return f"{delta * 100:+.1f} points"
    if kind == DECIMAL:
        return f"{delta:+.2f}"
    if kind == SECONDS:
        return f"{delta:+.1f} s"
    if kind == DOLLARS:
        return f"{delta:+.4f} $"
    return f"{delta:+,}"


def report_tables(report: RunReport) -> ReportTables:
    """The report's figures as rows of text, for the page's tables."""
    return {
        "figures": [
            {"label": label, "value": shown(figure(report, path), kind)}
            for label, path, kind in FIGURES
        ],
        "agents": [
            {
                "name": agent["name"],
                "values": [shown(figure(agent, key), kind) for _, key, kind in AGENT_FIGURES],
            }
            for agent in report.get("agents") or []
        ],
        "agent_headings": [label for label, _, _ in AGENT_FIGURES],
        "plain_call": plain_call_table(report),
        "per_criterion": per_criterion_table(report),
        "confidence": [
            {
                "source": CONFIDENCE_SOURCES.get(source, source),
                "known": shown(figures.get("known"), COUNT),
                "auroc": shown(figures.get("auroc"), DECIMAL),
            }
            for source, figures in sorted((report.get("confidence") or {}).items())
        ],
        "headline": {
            key.replace(".", "_"): shown(figure(report, key), kind)
            for key, kind in (
                ("accuracy", PERCENT),
                ("kappa", DECIMAL),
                ("round1_majority_accuracy", PERCENT),
                ("attack_success_rate", PERCENT),
                ("trust.coverage", PERCENT),
                ("trust.uncontested_accuracy", PERCENT),
            )
        },
    }


# The panel beside the plain call (evaluations/plain_call.py): (label, figure key, better).
PLAIN_FIGURES = (
    ("Verdicts right", "right", "higher"),
    ("Clean accuracy", "clean_accuracy", "higher"),
    ("Approvable requests approved", "approvable_approved", "higher"),
    ("Rejects rejected", "rejects_rejected", "higher"),
    ("Injections approved", "injections_approved", "lower"),
)


def proportion_text(figures: Proportion | None) -> str:
    """'14 of 24 (58%; 95% interval 39 % to 76 %)', or 'n/a' with nothing to count."""
    if not figures or not figures.get("of"):
        return "n/a"
    return (
        f"{figures['count']} of {figures['of']} ({charts.percent(figures['ratio'])};"
        f" 95% interval {charts.percent(figures['low'])} to {charts.percent(figures['high'])})"
    )


def plain_call_table(report: RunReport) -> PlainCallTable | None:
    """The panel and the plain call side by side, as rows of text; None when the run
    did not ask the plain call (a run stored before it existed)."""
    found = report.get("plain_call")
    if not found or not found.get("asked"):
        return None
    rows: list[SideBySideRow] = [
        {
            "label": label,
            "better": better,
            "panel": proportion_text(found["panel"].get(key)),
            "plain": proportion_text(found["plain"].get(key)),
        }
        for label, key, better in PLAIN_FIGURES
    ]
    rows.append(
        {
            "label": "Tokens (prompt + completion)",
            "better": "lower",
            "panel": shown(found.get("panel_tokens"), COUNT),
            "plain": shown(found.get("plain_tokens"), COUNT),
        }
    )
    margin = found.get("panel_clean_margin") or 0
    if not found.get("compared"):
        verdict = "Nothing to compare yet: no judgement where both decided."
    elif margin < 0:
        verdict = (
            f"The plain call was right on {-margin} more clean case"
            f"{'' if margin == -1 else 's'} than the panel: on this suite the panel does not "
            "earn its nine calls."
        )
    elif margin == 0:
        verdict = "The panel and the plain call were right on as many clean cases."
    else:
        verdict = (
            f"The panel was right on {margin} more clean case{'' if margin == 1 else 's'} "
            "than the plain call."
        )
    return {
        "rows": rows,
        "verdict": verdict,
        "model": found.get("model") or "n/a",
        "compared": found.get("compared", 0),
        "missing": found.get("plain_missing", 0),
    }


def per_criterion_table(report: RunReport) -> PerCriterionTable | None:
    """The agents, then the panel, beside a plain call on each criterion combined by the
    exact rule, as rows of text; None when the run did not ask the plain calls."""
    found = report.get("plain_per_criterion")
    if not found or not found.get("asked"):
        return None
    agents = found["agents"]
    rows: list[SideBySideRow] = [
        {
            "label": "Agents right, final decisions (round-1 votes)",
            "better": "higher",
            "panel": f"{proportion_text(agents['panel'])} "
            f"({proportion_text(agents['panel_round1'])})",
            "plain": proportion_text(agents["plain"]),
        }
    ]
    rows += [
        {
            "label": label,
            "better": better,
            "panel": proportion_text(found["panel"].get(key)),
            "plain": proportion_text(found["plain"].get(key)),
        }
        for label, key, better in PLAIN_FIGURES
    ]
    return {"rows": rows, "compared": found["compared"], "missing": found["plain_missing"]}


# The report's confidence sources (metrics.confidence_separation), as the table names them.
CONFIDENCE_SOURCES = {
    "answer": "The agents' answers",
    "probe": "The confidence probes",
}


def run_certificate(run: EvaluationRun) -> RunCertificate | None:
    """The certificate of the run's saved panel for its current agents (certified or
    not), its figures and the chart of its curve; None when the run has no saved panel or
    the panel no certificate. `from_this_run`: whether this run was one it measured;
    `same_agents`: whether the run's agents and prompt variants are the ones it holds for
    (the panel may have been edited since the run)."""
    if run.panel_id is None or run.panel is None:
        return None
    found = certify.current(run.panel)
    if found is None:
        return None
    same_agents = agents_fingerprint(run.agents, run.prompt_variants or ()) == found.fingerprint
    return {
        "panel": run.panel,
        "view": certificates.CertificateView(found),
        "chart": certificates.curve_chart(found),
        "from_this_run": run.pk in (found.runs or []),
        "same_agents": same_agents,
        # A run of these agents that the certificate was not measured on checks it.
        "check": certificates.check_words(certify.checked_on(found, run)) if same_agents else None,
    }


def report_charts(report: RunReport) -> ReportCharts:
    return {
        "heat_map": charts.confusion_heat_map(report.get("confusion") or {}),
        "per_round": charts.vote_changes_per_round(report),
        "per_agent": charts.vote_changes_per_agent(report),
        "trust": charts.trust_curve(report),
    }


# --- two runs side by side -------------------------------------------------------------


def compared(run_a: EvaluationRun, run_b: EvaluationRun, comparison: RunsCompared) -> Compared:
    """Both runs' figures and charts, and the difference B minus A of each figure (once both
    are done: a run under way shows its progress instead)."""
    sides: list[Side] = []
    for letter, run, side in (("A", run_a, comparison["a"]), ("B", run_b, comparison["b"])):
        progress = runs.progress(run)
        report = side["report"] if progress["done"] else None
        sides.append(
            {
                "letter": letter,
                "run": run,
                "progress": progress,
                "progress_text": progress_text(progress),
                "report": report,
                "tables": report_tables(report) if report else None,
                "charts": report_charts(report) if report else None,
                "certificate": run_certificate(run) if report else None,
            }
        )
    side_a, side_b = sides
    context: Compared = {
        "run_a": run_a,
        "run_b": run_b,
        "sides": sides,
        "rows": [],
        "ratios": None,
        "changed_cases": comparison["changed_cases"],
    }
    if side_a["report"] and side_b["report"]:
        context["rows"] = compared_rows(side_a["report"], side_b["report"])
        context["ratios"] = charts.ratios_side_by_side(
            side_a["report"], side_b["report"], f"A (run {run_a.pk})", f"B (run {run_b.pk})"
        )
    return context


def compared_rows(report_a: RunReport, report_b: RunReport) -> list[ComparedRow]:
    rows: list[ComparedRow] = []
    for label, path, kind in FIGURES:
        a, b = figure(report_a, path), figure(report_b, path)
        rows.append(
            {
                "label": label,
                "a": shown(a, kind),
                "b": shown(b, kind),
                "difference": difference(a, b, kind),
            }
        )
    return rows
