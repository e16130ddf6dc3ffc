"""Run one judgement from a JSON case file through the same validation, engine and
database as the web page."""

import asyncio
import json
import sys
from pathlib import Path

from asgiref.sync import sync_to_async
from django.core.management.base import BaseCommand

from judgements import engine
from judgements.forms import CaseError, validate_case
from judgements.models import Judgement, Status

EXIT_DECIDED, EXIT_ERROR, EXIT_INVALID = 0, 1, 2


class Command(BaseCommand):
    help = "Judge the case in CASE.json (or - for standard input) and report the decision."

    def add_arguments(self, parser) -> None:
        parser.add_argument("case", help="path to the case JSON file, or - for stdin")
        parser.add_argument("--json", action="store_true", help="print the result as JSON")

    def handle(self, *args, **options) -> None:
        try:
            case = validate_case(read_case(options["case"]))
        except CaseError as exc:
            for field, messages in exc.errors.items():
                self.stderr.write(f"invalid input: {field}: {' '.join(messages)}")
            sys.exit(EXIT_INVALID)
        judgement = Judgement.create_with_agents(case)
        self.stderr.write(f"judgement {judgement.pk}: {judgement.title}")
        asyncio.run(engine.run_judgement(judgement.pk, listener=self.progress))
        judgement = Judgement.objects.prefetch_related("agents__decisions").get(pk=judgement.pk)
        result = judgement.as_result()
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))
        else:
            self.stdout.write(f"{judgement.get_status_display()}")
            for agent in result["agents"]:
                final = agent["final_decision"] or "no decision"
                self.stdout.write(
                    f"  {agent['name']} ({agent['model']}): {final}, score {agent['score']:.1f}"
                )
            if judgement.error_message:
                self.stdout.write(f"  error: {judgement.error_message}")
        sys.exit(EXIT_ERROR if judgement.status == Status.ERROR else EXIT_DECIDED)

    async def progress(self, event: dict) -> None:
        if event["kind"] == engine.Event.DECISION_STORED:
            line = (
                f"round {event['round']}: {event['agent_name']}: {event['decision']} "
                f"- {event['reason']}"
            )
        elif event["kind"] == engine.Event.FAILED:
            line = f"error: {event['message']}"
        else:
            return
        await sync_to_async(self.stderr.write)(line)


def read_case(source: str):
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise CaseError({"case": [f"cannot read {source}: {exc.strerror}"]}) from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CaseError(
            {"case": [f"{source} is not valid JSON: {exc.msg} at line {exc.lineno}"]}
        ) from exc
