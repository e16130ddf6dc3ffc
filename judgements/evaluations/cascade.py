"""Certifying an escalation cascade (docs/escalation.md): a panel and the panels it
escalates to, each measured by its own finished evaluation runs on the same labelled
suites, replayed case by case (judgements/core/cascade.py chooses and tests each level's
rule), and stored as a certificate of the story's first panel (Certificate.levels) that
the levels' verdicts are then marked by (panels/escalation_chain.py cascade_in_force).

Each level counts only runs of its panel's current agents and prompt variants
(certify.eligible_runs), on the suites every level was run on; a case is a verdict of
every level (its first repeat), so the cascade can be replayed on it. The cost of a
level on a case is its judgement's tokens (prompt and completion, every attempt and
check) and seconds, from the run's report (evaluations/run_reports.py).
"""

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction

from judgements.audit import record as chain_record
from judgements.core import cascade, certificate, kept_verdicts
from judgements.core.errors import InvalidInput
from judgements.core.kept_verdicts import Sample
from judgements.evaluations import certify, metrics, run_reports
from judgements.models import Certificate, EvaluationRun, Panel
from judgements.panels import escalation_chain


@dataclass(frozen=True)
class Level:
    """One level's labelled verdicts and costs, by case ("suite S case C")."""

    panel: Panel
    runs: list[EvaluationRun]
    samples: dict[str, Sample]
    costs: dict[str, cascade.Cost]


def chain_of(panel: Panel) -> list[Panel]:
    """The panel and every panel it escalates to, in order; InvalidInput naming `panel`
    when it escalates nowhere or the chain is refused."""
    later = escalation_chain.levels_after(panel)
    if not later:
        raise InvalidInput(
            {"panel": [f"The panel {panel.name!r} escalates to no other panel: nothing to chain."]}
        )
    return [panel, *later]


def level_of(panel: Panel, suites: set[int] | None = None) -> Level:
    """A level's verdicts from its eligible runs (on `suites` only, when given)."""
    runs = [run for run in certify.eligible_runs(panel) if suites is None or run.suite_id in suites]
    samples: dict[str, Sample] = {}
    costs: dict[str, cascade.Cost] = {}
    for run in runs:
        records = run_reports.records_of(run)
        by_key = {(r.case_id, r.repeat): r for r in records}
        for sample in certify.samples_of(run, records, certify.unseen_signals(panel)):
            if sample.case in samples:
                continue  # one verdict a case: its first repeat, in any run
            samples[sample.case] = sample
            case_id, repeat = sample.key.split(" case ", 1)[1].rsplit(" repeat ", 1)
            record = by_key[(case_id, int(repeat))]
            costs[sample.case] = cascade.Cost(tokens_of(record), record.seconds or 0.0)
    return Level(panel, runs, samples, costs)


def tokens_of(record: metrics.Record) -> int:
    return sum(
        (used.get("prompt") or 0) + (used.get("completion") or 0) for used in record.tokens.values()
    )


def levels_of(panel: Panel) -> list[Level]:
    """Every level of the panel's chain, measured on the suites all of them were run on;
    InvalidInput naming `runs` when a level has no finished run there."""
    chain = chain_of(panel)
    suites: set[int] | None = None
    for level_panel in chain:
        ran = {run.suite_id for run in certify.eligible_runs(level_panel)}
        suites = ran if suites is None else suites & ran
    if not suites:
        raise InvalidInput(
            {
                "runs": [
                    "Run every panel of the chain ("
                    + ", ".join(p.name for p in chain)
                    + ") over the same labelled suite first: a cascade is replayed case by "
                    "case."
                ]
            }
        )
    return [level_of(level_panel, suites) for level_panel in chain]


def certify_cascade(
    panel: Panel,
    *,
    user: User | None = None,
    target: float = certify.DEFAULT_TARGET,
    delta: float = certify.DEFAULT_DELTA,
) -> Certificate:
    """Measure the cascade that starts at `panel` and store its certificate, certified or
    not, with its report. InvalidInput names `target`, `delta`, `panel` or `runs`."""
    certify.check_bounds(target, delta)
    levels = levels_of(panel)
    outcome = cascade.certify(
        [level.samples for level in levels],
        target=target,
        delta=delta,
        sources=certify.SOURCES,
        signals=certify.SIGNALS,
        costs=[level.costs for level in levels],
    )
    report = outcome.report
    kept = report["kept"]
    with transaction.atomic():
        made = Certificate.objects.create(
            panel=panel,
            created_by=user,
            agents=panel.agents,
            fingerprint=escalation_chain.chain_fingerprint([level.panel for level in levels]),
            runs=[run.pk for level in levels for run in level.runs],
            suites=[
                {"run": run.pk, "suite": {"id": run.suite_id, "name": run.suite.name}, "cases": []}
                for level in levels
                for run in level.runs
            ],
            target=target,
            delta=delta,
            samples=report["cases"],
            method=cascade.METHOD,
            split={
                "seed": certificate.DEFAULT_SEED,
                "selection_share": certificate.DEFAULT_SELECTION,
                "selection": report["selection"],
                "test": report["test"],
            },
            tested=[],
            certified=outcome.certified,
            rule=None if outcome.rules[0] is None else outcome.rules[0].as_dict(),
            coverage=kept["share_kept"] if outcome.certified else None,
            accuracy=kept["accuracy"] if outcome.certified else None,
            bound=report["guarantee"],
            kept=kept["kept"],
            levels={"panels": level_entries(levels, outcome.rules), "report": dict(report)},
        )
        chain_record.certificate(made)
        return made


def level_entries(
    levels: list[Level], rules: list[kept_verdicts.Rule | None]
) -> list[dict[str, object]]:
    """What a cascade's certificate keeps of each level: its panel, the fingerprint of
    what was measured, its rule (None: it keeps nothing) and its runs."""
    return [
        {
            "level": number,
            "panel": level.panel.pk,
            "name": level.panel.name,
            "fingerprint": escalation_chain.chain_fingerprint([level.panel]),
            "rule": None if rule is None else rule.as_dict(),
            "runs": [run.pk for run in level.runs],
        }
        for number, (level, rule) in enumerate(zip(levels, rules, strict=True), start=1)
    ]


def current(panel: Panel) -> Certificate | None:
    """The newest cascade certificate of the panel's chain as it stands (certified or
    not), None when none was made for it."""
    try:
        fingerprint = escalation_chain.chain_fingerprint(chain_of(panel))
    except InvalidInput:
        return None
    return (
        panel.certificates.filter(
            voided_at__isnull=True, levels__isnull=False, fingerprint=fingerprint
        )
        .order_by("-created_at", "-id")
        .first()
    )


# --- the report in words ----------------------------------------------------------------


def percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def interval_words(figures: cascade.KeptFigures) -> str:
    if figures["accuracy"] is None or figures["low"] is None or figures["high"] is None:
        return "n/a"
    return f"{figures['accuracy']:.0%} ({figures['low']:.0%} to {figures['high']:.0%})"


def accuracy_heading(found: Certificate) -> str:
    """The accuracy column's heading, as the page and the command both say it: the
    interval's confidence, 1 - delta ("kept accuracy (90% interval)")."""
    return f"kept accuracy ({1 - found.delta:.0%} interval)"


@dataclass(frozen=True)
class ReportRow:
    """One line of a cascade's report, in words: the page's table and the command's."""

    what: str
    reached: int
    kept: str
    accuracy: str
    tokens: str
    seconds: str
    passed_on: str
    rule: str


def report_rows(found: Certificate) -> list[ReportRow]:
    """Per level what it was handed, kept, how right (with the interval at 1 - delta), its
    cost and what it passed on; the cascade and what people get; the strongest level
    alone, every verdict in force and under its own certificate."""
    levels = found.levels or {}
    report = levels.get("report") or {}
    if not report:
        return []
    names = {entry["level"]: entry["name"] for entry in levels.get("panels", [])}
    rows = []
    for level in report["levels"]:
        f = level["figures"]
        rows.append(
            ReportRow(
                f"level {level['level']}: {names.get(level['level'], '')}",
                f["reached"],
                f"{f['kept']} ({percent(f['share_kept'])})",
                interval_words(f),
                f"{f['tokens']:,}",
                f"{f['seconds']:.1f}",
                str(level["passed_on_to"]),
                level["rule_words"],
            )
        )
    kept, alone = report["kept"], report["strongest_alone"]
    certified = report["strongest_certified"]
    rows += [
        ReportRow(
            "the cascade",
            kept["reached"],
            f"{kept['kept']} ({percent(kept['share_kept'])})",
            interval_words(kept),
            f"{kept['tokens']:,}",
            f"{kept['seconds']:.1f}",
            f"{report['people']} to people ({percent(report['people_share'])})",
            "",
        ),
        ReportRow(
            "strongest level alone, every verdict",
            alone["reached"],
            f"{alone['kept']} (100%)",
            interval_words(alone),
            f"{alone['tokens']:,}",
            f"{alone['seconds']:.1f}",
            "0",
            "",
        ),
        ReportRow(
            "strongest level alone, certified alone",
            certified["reached"],
            f"{certified['kept']} ({percent(certified['share_kept'])})",
            interval_words(certified),
            f"{alone['tokens']:,}",
            f"{alone['seconds']:.1f}",
            f"{certified['reached'] - certified['kept']} to people",
            "",
        ),
    ]
    return rows


def report_lines(found: Certificate) -> list[str]:
    """A cascade certificate's report as Markdown, for the command line."""
    lines = [found.describe(), ""]
    report = (found.levels or {}).get("report") or {}
    if not report:
        return lines
    lines += [
        f"Held-out cases: {len(report['test'])} (chosen on {len(report['selection'])} others); "
        f"delta {found.delta:g}, {report['delta_per_level']:g} per level.",
        "",
        f"| | reached | kept (share of all) | {accuracy_heading(found)} "
        "| tokens | seconds | passed on | rule |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in report_rows(found):
        what = f"**{row.what}**" if row.what == "the cascade" else row.what
        lines.append(
            f"| {what} | {row.reached} | {row.kept} | {row.accuracy} | {row.tokens} | "
            f"{row.seconds} | {row.passed_on} | {row.rule} |"
        )
    return lines
