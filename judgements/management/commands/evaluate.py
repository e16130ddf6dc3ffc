"""Run a panel over a suite of labelled cases and report how good its verdicts are.

    manage.py evaluate SUITE.jsonl --panel PANEL [--repeat N] [--variants A+B] [--json]
        [--certify]
    manage.py evaluate --certify --panel PANEL [--target 0.9] [--delta 0.1] [--json]

With --certify, PANEL must be a saved panel: after the run (or, without a suite, at once)
the panel is certified from every finished run of its current agents
(judgements/evaluations/certify.py) and the certificate is printed: the rule under which
its verdicts say "Not contested" and the bound on their accuracy, or the best bound
reached when no rule reaches the target. With --json the output is then
{"report": ..., "certificate": ...} (report null without a suite).

--variants names the prompt variants the run's judgements use (docs/panel-quality.md),
joined with "+", or `none` for none; without it, the saved panel's setting (for a panel
file, or a panel that sets none, the site's default).

PANEL is a path to a panel file ({"name", "agents"}, optionally "description") when such
a file exists, else a saved panel's name or id (the command line acts as the operator,
who may use every panel).

The suite is stored under the file's name without its extension and without an owner,
like the suites MAGI ships, so its runs can be compared on the report page. Running the
same file again reuses that suite; a file whose cases differ from a stored suite of the
same name is refused (exit 2): give it another name, or import it with `manage.py suite
import FILE --name NAME`.

The run's judgements are ordinary judgements, run in this process (and by any worker that
is running too). A progress line goes to standard error each time one finishes, so with
--json standard output holds only the report. Exit 0 once the run completed, whatever
its accuracy; 2 for invalid input, naming the field or the line.
"""

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction
from django.utils import timezone

from judgements.core import prompt_variants, text
from judgements.core.errors import InvalidInput
from judgements.engine import lifecycle
from judgements.engine.runner import EngineRunner
from judgements.evaluations import certify, runs, suites
from judgements.infrastructure.database import db_call
from judgements.intake import budgets, saved_panels, schemas
from judgements.management import invalid_input
from judgements.models import Certificate, EvaluationRun, Judgement, Panel, Suite
from judgements.outcome import answers

EXIT_COMPLETED, EXIT_INVALID, EXIT_INTERRUPTED = 0, 2, 130
# Judgements run elsewhere (by a worker) are looked at this often.
PROGRESS_RECHECK_SECONDS = 1.0
PANEL_FILE_FIELDS = ("name", "description", "agents")


class Command(BaseCommand):
    help = "Run a panel over a JSONL suite of labelled cases and report its accuracy."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("suite", nargs="?", help="path to the suite: one JSON case a line")
        parser.add_argument(
            "--panel",
            required=True,
            help='a saved panel\'s name or id, or a path to a JSON file {"name", "agents"}',
        )
        parser.add_argument(
            "--repeat",
            default="1",
            help=f"run every case this many times, 1 to {runs.MAX_REPEATS} (default 1)",
        )
        parser.add_argument(
            "--variants",
            default=None,
            help="the prompt variants to run, joined with + (none: no variant); default: "
            "the saved panel's, else the site's default",
        )
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument(
            "--certify",
            action="store_true",
            help="then certify the saved panel from its finished runs of its current agents",
        )
        parser.add_argument(
            "--target",
            default=str(certify.DEFAULT_TARGET),
            help="with --certify: the accuracy the bound must reach (default 0.9)",
        )
        parser.add_argument(
            "--delta",
            default=str(certify.DEFAULT_DELTA),
            help="with --certify: the bound holds at confidence 1 - delta (default 0.1)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            target, delta = certify_options(options)
            if options["suite"] is None:
                if not options["certify"]:
                    raise InvalidInput({"suite": ["Give the suite's path (or --certify alone)."]})
                self.certify_only(options, target, delta)
            run = self.start(options)
        except InvalidInput as exc:
            self.invalid(exc)
        self.stderr.write(
            f"run {run.pk}: panel {run.panel_name} on suite {run.suite.name}, "
            f"{run.repeats} repeat(s)"
        )
        engine_log = logging.getLogger("judgements")
        level = engine_log.level
        if options["verbosity"] < 2:
            # The engine logs each judgement's start and end; the progress line says
            # enough (-v 2 shows them).
            engine_log.setLevel(max(level, logging.WARNING))
        try:
            asyncio.run(self.follow(run))
        except KeyboardInterrupt:
            self.stderr.write(
                f"interrupted: run {run.pk} is stored; its judgements go on once a worker "
                "runs (the web server, or manage.py runworker magi-engine)"
            )
            sys.exit(EXIT_INTERRUPTED)
        finally:
            engine_log.setLevel(level)
        report = runs.report(run)
        if not options["certify"]:
            if options["json"]:
                self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            else:
                self.stdout.write(readable(run, report))
            sys.exit(EXIT_COMPLETED)
        assert run.panel is not None  # certify_options asked for a saved panel
        try:
            certificate = certify.certify(run.panel, target=target, delta=delta)
        except InvalidInput as exc:
            self.invalid(exc)
        self.write_certified(options, report, certificate, run)
        sys.exit(EXIT_COMPLETED)

    def certify_only(self, options: dict[str, Any], target: float, delta: float) -> None:
        """--certify without a suite: certify the saved panel from the runs it has."""
        try:
            panel = saved_panels.resolve(options["panel"], None)
        except InvalidInput as exc:
            raise InvalidInput({"panel": exc.errors.get("panel", ["Not a saved panel."])}) from None
        certificate = certify.certify(panel, target=target, delta=delta)
        self.write_certified(options, None, certificate, None)
        sys.exit(EXIT_COMPLETED)

    def write_certified(
        self,
        options: dict[str, Any],
        report: dict[str, Any] | None,
        certificate: Certificate,
        run: EvaluationRun | None,
    ) -> None:
        if options["json"]:
            both = {
                "report": report,
                "certificate": answers.Certificate.from_record(certificate).model_dump(mode="json"),
            }
            self.stdout.write(json.dumps(both, indent=2, ensure_ascii=False))
            return
        if report is not None and run is not None:  # given together, or neither
            self.stdout.write(readable(run, report))
        self.stdout.write(certificate_lines(certificate))

    def invalid(self, exc: InvalidInput) -> NoReturn:
        invalid_input.refuse(self.stderr, exc)

    # --- input ------------------------------------------------------------------------

    def start(self, options: dict[str, Any]) -> EvaluationRun:
        """Validate every input (all errors at once), then store the suite and the run in
        one transaction: invalid input stores nothing."""
        errors: dict[str, list[str]] = {}
        repeats = parse_repeat(options["repeat"], errors)
        variants = parse_variants(options["variants"], errors)
        panel, agents, panel_name = read_panel(options["panel"], errors)
        if options["certify"] and panel is None and "panel" not in errors:
            errors["panel"] = ["--certify needs a saved panel's name or id, not a panel file."]
        if options["certify"] and panel is not None and variants is not None:
            same_variants(panel, variants, errors)
        path = Path(options["suite"])
        try:
            data = path.read_bytes()
        except OSError as exc:
            errors["suite"] = [f"Cannot read {options['suite']}: {exc.strerror}."]
            data = None
        cases = None
        if data is not None:
            try:
                cases = suites.parse_jsonl(data)
            except InvalidInput as exc:
                errors.update(exc.errors)
        if errors:
            raise InvalidInput(errors)
        assert data is not None and cases is not None  # each None comes with an error above
        try:
            with transaction.atomic():
                suite = suite_for(path, data, cases)
                return runs.start_run(
                    panel=panel,
                    agents=agents,
                    panel_name=panel_name,
                    suite=suite,
                    repeats=repeats,
                    creator=None,
                    variants=variants,
                )
        except InvalidInput as exc:
            raise InvalidInput(
                {
                    (f"panel.{field}" if field.startswith("agents") else field): messages
                    for field, messages in exc.errors.items()
                }
            ) from None
        except budgets.BudgetExceeded as exc:
            raise InvalidInput({"budget": [exc.message]}) from None

    # --- following ----------------------------------------------------------------------

    async def follow(self, run: EvaluationRun) -> None:
        """Run the run's waiting judgements here, within the engine's capacity, and print
        a progress line whenever the count of finished ones changes. Judgements another
        worker holds are left to it and followed in the database."""
        runner = EngineRunner()
        shown = None
        while True:
            state = await db_call(runs.progress)(run)
            if state != shown:
                self.stderr.write(progress_line(state))
                shown = state
            if state["done"]:
                break
            await expire_overdue(runner)
            for judgement_id in await waiting(run, runner):
                if not runner.free_capacity():
                    break
                runner.start(judgement_id)
            runner.capacity_freed.clear()
            try:
                async with asyncio.timeout(PROGRESS_RECHECK_SECONDS):
                    await runner.capacity_freed.wait()
            except TimeoutError:
                pass
        await asyncio.gather(*runner.running.values(), return_exceptions=True)


def certify_options(options: dict[str, Any]) -> tuple[float, float]:
    """--target and --delta as numbers in (0, 1); InvalidInput naming each that is not."""
    errors: dict[str, list[str]] = {}
    values = []
    for name in ("target", "delta"):
        try:
            value = float(options[name])
        except ValueError:
            value = -1.0
        if not 0 < value < 1:
            errors[name] = ["Must be a number between 0 and 1, both excluded."]
        values.append(value)
    if errors:
        raise InvalidInput(errors)
    return values[0], values[1]


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


def parse_variants(value: str | None, errors: dict[str, list[str]]) -> list[str] | None:
    """--variants as start_run takes them: None when not given (the panel's setting)."""
    if value is None:
        return None
    try:
        return saved_panels.named_variants(value)
    except ValueError as exc:
        errors["--variants"] = [str(exc)]
        return None


def same_variants(panel: Panel, variants: list[str], errors: dict[str, list[str]]) -> None:
    """A certificate measures the panel as it runs: a run with other variants than the
    panel's would not count, so --certify with them is refused before the run."""
    try:
        own = saved_panels.variants_for(panel)
    except InvalidInput as exc:
        errors.update(exc.errors)
        return
    if prompt_variants.parse(variants) != own:
        errors["--variants"] = [
            f"--certify measures the panel with its own prompt variants "
            f"({prompt_variants.label(own)}): leave --variants out, or change the panel's."
        ]


def parse_repeat(value: str, errors: dict[str, list[str]]) -> int:
    if value.isascii() and value.isdecimal() and 1 <= int(value) <= runs.MAX_REPEATS:
        return int(value)
    errors["repeat"] = [f"Must be a whole number from 1 to {runs.MAX_REPEATS}."]
    return 1


def read_panel(reference: str, errors: dict[str, list[str]]) -> tuple[Panel | None, Any, str]:
    """(Panel or None, agents, name) from a panel file or a saved panel. A file's agents
    are its JSON as read: start_run validates them."""
    path = Path(reference)
    if not path.is_file():
        try:
            panel = saved_panels.resolve(reference, None)
        except InvalidInput as exc:
            message = " ".join(exc.errors.get("panel", []))
            errors["panel"] = [f"{message} Nor is it a panel file."]
            return None, [], ""
        return panel, saved_panels.agents_of(panel), panel.name
    try:
        spec = json.loads(path.read_bytes().decode("utf-8-sig"))
    except OSError as exc:
        errors["panel"] = [f"Cannot read {reference}: {exc.strerror}."]
        return None, [], ""
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        errors["panel"] = [f"{reference} is not a UTF-8 JSON file: {exc}."]
        return None, [], ""
    if not isinstance(spec, dict):
        errors["panel"] = ['The panel file must hold a JSON object {"name", "agents"}.']
        return None, [], ""
    for key in spec:
        if key not in PANEL_FILE_FIELDS:
            errors[f"panel.{text.escaped(str(key))}"] = [
                f"Unknown field; the fields are {', '.join(PANEL_FILE_FIELDS)}."
            ]
    name = spec.get("name")
    if not isinstance(name, str) or not name.strip():
        errors["panel.name"] = ["The panel needs a name (a string)."]
        name = ""
    agents = spec.get("agents")
    try:  # checked now too, so a bad file shows every error at once
        schemas.validated_agents(agents)
    except InvalidInput as exc:
        errors.update({f"panel.{f}": m for f, m in exc.errors.items() if f.startswith("agents")})
    return None, agents, name


def suite_for(path: Path, data: bytes, cases: list[dict[str, Any]]) -> Suite:
    """The owner-less suite named after the file: reused when its cases are the file's,
    created when there is none, refused when it holds other cases."""
    name = path.stem
    key = text.comparable_name(name)
    for existing in Suite.objects.filter(owner=None):
        if text.comparable_name(existing.name) == key:
            if suites.cases_of(existing) == cases:
                return existing
            raise InvalidInput(
                {
                    "suite": [
                        f"A different suite is already called {existing.name!r}: rename the "
                        "file, or import it under another name with `manage.py suite import`."
                    ]
                }
            )
    try:
        return suites.import_suite(
            name=name,
            description=f"Imported by manage.py evaluate from {path.name}.",
            owner=None,
            data=data,
        )
    except InvalidInput as exc:
        raise InvalidInput(
            {f"suite {f}" if f == "name" else f: m for f, m in exc.errors.items()}
        ) from None


def claimable_ids(run: EvaluationRun) -> list[int]:
    claimable = Judgement.objects.claimable(timezone.now()).filter(evaluation_run=run)
    return list(claimable.order_by("pk").values_list("pk", flat=True))


async def waiting(run: EvaluationRun, runner: EngineRunner) -> list[int]:
    """The run's judgements nobody holds, oldest first, not already running here."""
    ids = await db_call(claimable_ids)(run)
    return [pk for pk in ids if pk not in runner.running]


async def expire_overdue(runner: EngineRunner) -> None:
    """End in error judgements past their time that nobody holds, as a worker's sweep
    does: without a worker running, the run would otherwise wait on them for ever."""
    await lifecycle.aexpire_overdue(runner.worker_id)


def progress_line(state: dict[str, Any]) -> str:
    errors = state["errors"]
    return (
        f"progress: {state['finished']}/{state['total']} judgements finished, "
        f"{errors} error{'' if errors == 1 else 's'}"
    )


# --- the readable report ------------------------------------------------------------------


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def readable(run: EvaluationRun, report: dict[str, Any]) -> str:
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
        *plain_call_lines(report.get("plain_call")),
    ]
    return "\n".join(lines)


def plain_call_lines(found: dict[str, Any] | None) -> list[str]:
    """The panel beside the run's plain call (evaluations/plain_call.py), one line a figure:
    count of whole and the 95% Wilson interval, panel then plain call."""
    if not found or not found["asked"]:
        return []

    def side(figure: dict[str, Any]) -> str:
        if not figure["of"]:
            return "-"
        return (
            f"{figure['count']}/{figure['of']} "
            f"[{percent(figure['low'])} to {percent(figure['high'])}]"
        )

    lines = [
        f"Panel against one plain call of {found['model']} with all three criteria "
        f"({found['compared']} judgements where both decided):"
    ]
    for label, key in (
        ("clean accuracy", "clean_accuracy"),
        ("approvable approved", "approvable_approved"),
        ("rejects rejected", "rejects_rejected"),
        ("injections approved", "injections_approved"),
    ):
        lines.append(
            f"  {label}: panel {side(found['panel'][key])}, plain {side(found['plain'][key])}"
        )
    lines.append(
        f"  tokens: panel {found['panel_tokens'] or '-'}, plain {found['plain_tokens'] or '-'}"
    )
    return lines
