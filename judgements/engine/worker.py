"""Where the engine runs: inside the web process on the embedded default, or in worker
processes (`manage.py runworker magi-engine`) when Redis carries the channel layer."""

import asyncio
import logging

from judgements.engine.runner import EngineRunner

log = logging.getLogger(__name__)


class InProcessEngine:
    """The engine inside the web process, started with its first connection (daphne has
    no lifespan hook to start it earlier)."""

    def __init__(self) -> None:
        self.runner: EngineRunner | None = None
        self.task: asyncio.Task[None] | None = None

    def ensure_running(self) -> None:
        if self.task is not None and not self.task.done():
            return
        self.runner = EngineRunner()
        self.task = asyncio.get_running_loop().create_task(self.runner.run_forever())
        log.info("%s running inside the web process", self.runner)


in_process = InProcessEngine()
