"""Run one judgement from a JSON case file through the same validation, engine and
database as the web page. The case may name a saved panel ("panel": name or id) in place
of its agents; the command line is the operator's, who may use every user's panels.

The exit status is the verdict in force, fail-closed: only 0 means go.

    0  approved
    1  error: a call failed for good, or the judgement ran out of time
    2  invalid input (the field is named on standard error)
    3  rejected
    4  held: the verdict is contested and the case asked to hold it for a person
    7  refused by a spending limit, before any call (docs/teams.md)
"""

import asyncio
import json
import math
import sys
from pathlib import Path
from typing import TypedDict, Unpack

from django.core.management.base import BaseCommand, CommandParser

from judgements.core.errors import InvalidInput
from judgements.core.json_values import JsonValue
from judgements.engine.runner import EngineRunner
from judgements.infrastructure import events
from judgements.infrastructure.database import db_call
from judgements.intake import schemas, start
from judgements.intake.cases import parse_case_json
from judgements.management import invalid_input
from judgements.models import Judgement, RoundDecision, Status
from judgements.outcome import answers
from judgements.spending import budgets

EXIT_APPROVED, EXIT_ERROR, EXIT_INVALID, EXIT_REJECTED, EXIT_HELD = 0, 1, 2, 3, 4
# As `magi gate`'s: refused by a spending limit.
EXIT_OVER_BUDGET = 7
EXIT_OF_VERDICT: dict[str, int] = {
    Status.APPROVED: EXIT_APPROVED,
    Status.REJECTED: EXIT_REJECTED,
    Status.HELD: EXIT_HELD,
}
# Without a channel layer to wake it, the progress lines still come this often.
PROGRESS_RECHECK_SECONDS = 1.0


class JudgeOptions(TypedDict):
    """What add_arguments parses."""

    case: str
    json: bool


class Command(BaseCommand):
    help = "Judge the case in CASE.json (or - for standard input) and report the decision."
    # Django's system checks read the URL configuration, the admin and the templates,
    # none of which a judgement uses; they cost a third of a second of every gate's
    # verdict. `manage.py check` and `migrate` (so `make run`) still run them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("case", help="path to the case JSON file, or - for stdin")
        parser.add_argument("--json", action="store_true", help="print the result as JSON")
        # Django offers it only to commands that run the checks; kept so that command
        # lines written when judge ran them still work (and its help reads as before).
        parser.add_argument("--skip-checks", action="store_true", help="Skip system checks.")

    def handle(self, *args: object, **options: Unpack[JudgeOptions]) -> None:
        try:
            # No creator: the operator's command line, under no user's limits, may name
            # any saved panel.
            case = schemas.validated(schemas.CaseJson, read_case(options["case"])).case()
            judgement = start.submit([case], start.Submission()).judgement
        except InvalidInput as exc:
            invalid_input.refuse(self.stderr, exc)
        except budgets.BudgetExceeded as exc:
            self.stderr.write(exc.message)
            sys.exit(EXIT_OVER_BUDGET)
        self.stderr.write(f"judgement {judgement.pk}: {judgement.title}")
        asyncio.run(self.judge(judgement.pk))
        judgement = Judgement.objects.prefetch_related("agents__decisions").get(pk=judgement.pk)
        result = answers.Judgement.from_record(judgement).as_json()
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))
        else:
            self.stdout.write(f"{judgement.get_verdict_display()}")
            for agent in result["agents"]:
                final = agent["final_decision"] or "no decision"
                self.stdout.write(
                    f"  {agent['name']} ({agent['model']}): {final}, score {agent['score']:.1f}"
                )
            if judgement.error_message:
                self.stdout.write(f"  error: {judgement.error_message}")
            if result["trust_words"]:
                self.stdout.write(f"  {result['trust_words']}")
            if judgement.contested:
                self.stdout.write("  contested:")
                for reason in judgement.contest_reasons:
                    self.stdout.write(f"    - {reason}")
        # Anything but an approval in force (an unknown verdict too) is not a go.
        sys.exit(EXIT_OF_VERDICT.get(judgement.verdict, EXIT_ERROR))

    async def judge(self, judgement_id: int) -> None:
        """Run the judgement in this process, printing each decision as it is stored: the
        command follows the judgement's events the way the API's `?wait` does. A level
        that escalates is followed by the story's next level, run here too
        (docs/escalation.md)."""
        level: int | None = judgement_id
        printed: set[int] = set()
        while level is not None:
            work = asyncio.create_task(EngineRunner().run_judgement(level))
            async for _ in events.changes(level, math.inf, recheck=PROGRESS_RECHECK_SECONDS):
                await self.print_progress(level, printed)
                if work.done():
                    break
            await work
            await self.print_progress(level, printed)
            level = await db_call(next_level_id)(level)
        judgement = await db_call(Judgement.objects.get)(pk=judgement_id)
        if judgement.status == Status.ERROR:
            self.stderr.write(f"error: {judgement.error_message}")

    async def print_progress(self, judgement_id: int, printed: set[int]) -> None:
        """One line for every decision not printed yet."""
        for decision in await db_call(decisions_after)(judgement_id, set(printed)):
            printed.add(decision.pk)
            self.stderr.write(
                f"round {decision.round}: {decision.agent.name}: {decision.decision} "
                f"- {decision.reason}"
            )


def next_level_id(judgement_id: int) -> int | None:
    """The level a judgement escalated to, once started; None when it did not."""
    following = Judgement.objects.filter(escalated_from_id=judgement_id)
    return following.values_list("pk", flat=True).first()


def decisions_after(judgement_id: int, printed: set[int]) -> list[RoundDecision]:
    decisions = RoundDecision.objects.filter(agent__judgement_id=judgement_id)
    decisions = decisions.exclude(pk__in=printed).select_related("agent")
    return list(decisions.order_by("round", "created_at"))


def read_case(source: str) -> JsonValue:
    """The case JSON in a file or on standard input ("-"); InvalidInput if it cannot be read.

    Read as bytes, so input that is not UTF-8 gets a message rather than a traceback.
    """
    name = "standard input" if source == "-" else source
    try:
        if source == "-":
            stdin = sys.stdin
            raw = stdin.buffer.read() if hasattr(stdin, "buffer") else stdin.read().encode()
        else:
            raw = Path(source).read_bytes()
    except OSError as exc:
        raise InvalidInput({"case": [f"cannot read {source}: {exc.strerror}"]}) from exc
    except UnicodeEncodeError as exc:  # a text stdin that decoded bytes to surrogates
        raise InvalidInput({"case": [f"{name} is not UTF-8 text."]}) from exc
    return parse_case_json(raw, name)
