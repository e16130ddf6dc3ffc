from channels.management.commands import runworker

from judgements.worker import EngineWorker


class Command(runworker.Command):
    """Channels' runworker, with the engine's worker that also sweeps for lost work."""

    worker_class = EngineWorker
