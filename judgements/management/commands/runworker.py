import asyncio
from typing import TypedDict, Unpack

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judgements.engine.runner import EngineRunner
from judgements.models.magi_settings import magi_settings


class RunWorkerOptions(TypedDict):
    """What add_arguments parses."""

    channels: list[str]


class Command(BaseCommand):
    help = (
        "Run an engine worker: it takes judgements woken on the engine channel and sweeps "
        "the database for queued and abandoned ones."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "channels", nargs="+", help=f"must be {magi_settings.MAGI_ENGINE_CHANNEL}"
        )

    def handle(self, *args: object, **options: Unpack[RunWorkerOptions]) -> None:
        unknown = set(options["channels"]) - {magi_settings.MAGI_ENGINE_CHANNEL}
        if unknown:
            raise CommandError(
                f"unknown channel(s) {', '.join(sorted(unknown))}; "
                f"engine workers listen on {magi_settings.MAGI_ENGINE_CHANNEL}"
            )
        asyncio.run(EngineRunner().run_forever())
