"""What `manage.py evaluate` prints for people: a progress line as judgements finish, the
run's report in lines, and the certificate. (With --json it prints the report as JSON.)
"""

from judgements.evaluations.plain_call import (
    PerCriterionComparison,
    PlainCallComparison,
    Proportion,
)
from judgements.evaluations.run_reports import RunReport
from judgements.evaluations.runs import Progress
from judgements.models import Certificate, EvaluationRun


def progress_line(state: Progress) -> str:
    errors = state["errors"]
    return (
        f"progress: {state['finished']}/{state['total']} judgements finished, "
        f"{errors} error{'' if errors == 1 else 's'}"
    )


def certificate_lines(certificate: Certificate) -> str:
    """The certificate as the command prints it."""
    lines = [f"Certificate {certificate.pk} for panel {certificate.panel.name}:"]
    lines.append(f"  {certificate.describe()}")
    if certificate.certified and certificate.the_rule is not None:
        lines.append(f"  Rule: keep a verdict when {certificate.the_rule.describe()}.")
        lines.append(
            f"  Kept {certificate.kept} of the {certificate.test_size} held-out verdicts it "
            f"was tested on; right {percent(certificate.accuracy)} of those kept."
        )
    runs_used = ", ".join(
        f"run {suite['run']} ({suite['suite']['name']}, {len(suite['cases'])} cases)"
        for suite in certificate.suites
    )
    lines.append(f"  Measured on {runs_used}.")
    return "\n".join(lines)


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def readable(run: EvaluationRun, report: RunReport) -> str:
    confusion = report["confusion"]
    delib = report["deliberation"]
    by_round = report["vote_changes_by_round"]
    tokens = report["tokens"]
    kappa = "-" if report["kappa"] is None else f"{report['kappa']:.2f}"
    seconds = report["seconds_per_judgement"]
    lines = [
        f"Panel {run.panel_name} on suite {run.suite.name}: {report['cases']} cases x "
        f"{report['repeats']} repeat(s), {report['judgements']} judgements",
        f"Accuracy: {percent(report['accuracy'])}  (kappa {kappa}; errors {report['errors']})",
        f"  perfect agents under the rule: {percent(report.get('perfect_agents_accuracy'))}",
        "Confusion (expected -> got):",
        f"  approve -> approve {confusion['approve']['approve']}, "
        f"reject {confusion['approve']['reject']}",
        f"  reject  -> approve {confusion['reject']['approve']}, "
        f"reject {confusion['reject']['reject']}",
        f"Round-1 majority accuracy: {percent(report['round1_majority_accuracy'])}; "
        f"deliberation fixed {delib['fixed']}, broke {delib['broke']}",
        f"Vote changes: {report['vote_changes']} ({report['changes_with_majority']} with the "
        "majority; " + ", ".join(f"round {n}: {count}" for n, count in by_round.items()) + ")",
        f"  toward the expected verdict {report['changes_toward_expected']}, away from it "
        f"{report['changes_away_from_expected']}",
        "Agents:",
    ]
    for agent in report["agents"]:
        lines.append(
            f"  {agent['name']}: accuracy {percent(agent['accuracy'])}, round 1 "
            f"{percent(agent['round1_accuracy'])}, {agent['vote_changes']} vote changes "
            f"({agent['changes_with_majority']} with the majority)"
        )
    lines += [
        "Unstable cases: " + (", ".join(report["unstable_cases"]) or "none"),
        f"Attack success rate: {percent(report['attack_success_rate'])}",
        "Tokens: "
        + ", ".join(
            f"{kind} {'-' if tokens[kind] is None else tokens[kind]}"
            for kind in ("prompt", "completion", "cached")
        ),
        "Mean time per judgement: " + ("-" if seconds is None else f"{seconds:.1f} s"),
        "Run's wall time: "
        + ("-" if report["wall_seconds"] is None else f"{report['wall_seconds']:.1f} s"),
        "Cost: "
        + (
            "- (needs a price for every model used, in MAGI_MODEL_PRICES)"
            if report["cost"] is None
            else f"{report['cost']:.4f} USD"
        ),
        *per_criterion_lines(report.get("plain_per_criterion")),
        *plain_call_lines(report.get("plain_call")),
    ]
    return "\n".join(lines)


VERDICT_FIGURES = (
    ("verdicts right", "right"),
    ("clean accuracy", "clean_accuracy"),
    ("approvable approved", "approvable_approved"),
    ("rejects rejected", "rejects_rejected"),
    ("injections approved", "injections_approved"),
)


def side(figure: Proportion) -> str:
    """A proportion as "count/whole [low to high]", its 95% Wilson interval; "-" of none."""
    if not figure["of"]:
        return "-"
    return (
        f"{figure['count']}/{figure['of']} [{percent(figure['low'])} to {percent(figure['high'])}]"
    )


def per_criterion_lines(found: PerCriterionComparison | None) -> list[str]:
    """The agents, then the panel, beside a plain call on each criterion combined by the
    exact rule (evaluations/plain_call.py per_criterion), one line a figure."""
    if not found or not found["asked"]:
        return []
    agents = found["agents"]
    lines = [
        "Agents against a plain call on each criterion, combined by the exact rule "
        f"({found['compared']} judgements where the panel and the three calls decided):",
        f"  agents right: final {side(agents['panel'])}, round 1 "
        f"{side(agents['panel_round1'])}, plain per criterion {side(agents['plain'])}",
    ]
    for label, key in VERDICT_FIGURES:
        lines.append(
            f"  {label}: panel {side(found['panel'][key])}, "
            f"plain per criterion {side(found['plain'][key])}"
        )
    return lines


def plain_call_lines(found: PlainCallComparison | None) -> list[str]:
    """The panel beside the run's plain call told the rule (evaluations/plain_call.py), one
    line a figure: count of whole and the 95% Wilson interval, panel then plain call."""
    if not found or not found["asked"]:
        return []
    lines = [
        f"Panel against one plain call of {found['model']} told the three criteria and the "
        f"rule ({found['compared']} judgements where both decided):"
    ]
    for label, key in VERDICT_FIGURES:
        lines.append(
            f"  {label}: panel {side(found['panel'][key])}, plain {side(found['plain'][key])}"
        )
    lines.append(
        f"  tokens: panel {found['panel_tokens'] or '-'}, plain {found['plain_tokens'] or '-'}"
    )
    return lines
