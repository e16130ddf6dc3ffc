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
from typing import NoReturn, Unpack

from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction
from django.utils import timezone

from judgements.core.errors import InvalidInput
from judgements.engine import lifecycle
from judgements.engine.runner import EngineRunner
from judgements.evaluations import certify, run_reports, runs, suites
from judgements.evaluations.run_reports import RunReport
from judgements.infrastructure.database import db_call
from judgements.management import evaluation_input, evaluation_report, invalid_input
from judgements.management.evaluation_input import EvaluateOptions
from judgements.models import Certificate, EvaluationRun, Judgement
from judgements.outcome import answers
from judgements.panels import saved_panels
from judgements.spending import budgets

EXIT_COMPLETED, EXIT_INVALID, EXIT_INTERRUPTED = 0, 2, 130
# Judgements run elsewhere (by a worker) are looked at this often.
PROGRESS_RECHECK_SECONDS = 1.0


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

    def handle(self, *args: object, **options: Unpack[EvaluateOptions]) -> None:
        try:
            target, delta = evaluation_input.certify_options(options)
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
        report = run_reports.report(run)
        if not options["certify"]:
            if options["json"]:
                self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            else:
                self.stdout.write(evaluation_report.readable(run, report))
            sys.exit(EXIT_COMPLETED)
        assert run.panel is not None  # certify_options asked for a saved panel
        try:
            certificate = certify.certify(run.panel, target=target, delta=delta)
        except InvalidInput as exc:
            self.invalid(exc)
        self.write_certified(options, report, certificate, run)
        sys.exit(EXIT_COMPLETED)

    def certify_only(self, options: EvaluateOptions, target: float, delta: float) -> None:
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
        options: EvaluateOptions,
        report: RunReport | None,
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
            self.stdout.write(evaluation_report.readable(run, report))
        self.stdout.write(evaluation_report.certificate_lines(certificate))

    def invalid(self, exc: InvalidInput) -> NoReturn:
        invalid_input.refuse(self.stderr, exc)

    # --- input ------------------------------------------------------------------------

    def start(self, options: EvaluateOptions) -> EvaluationRun:
        """Validate every input (all errors at once), then store the suite and the run in
        one transaction: invalid input stores nothing."""
        errors: dict[str, list[str]] = {}
        repeats = evaluation_input.parse_repeat(options["repeat"], errors)
        variants = evaluation_input.parse_variants(options["variants"], errors)
        panel, agents, panel_name = evaluation_input.read_panel(options["panel"], errors)
        if options["certify"] and panel is None and "panel" not in errors:
            errors["panel"] = ["--certify needs a saved panel's name or id, not a panel file."]
        if options["certify"] and panel is not None and variants is not None:
            evaluation_input.same_variants(panel, variants, errors)
        assert options["suite"] is not None  # handle asked for it
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
                suite = evaluation_input.suite_for(path, data, cases)
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
                self.stderr.write(evaluation_report.progress_line(state))
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
