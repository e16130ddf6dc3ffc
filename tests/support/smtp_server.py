"""A real SMTP server on 127.0.0.1 (aiosmtpd) that keeps what arrives, for the tests of
reviewers' notifications. With `hold_first`, the first message is kept but not answered
until `gate` is set: how a test holds a send in flight (and kills its worker) without
sleeping."""

import asyncio
import socket
import threading
import time
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from typing import Any

from aiosmtpd.controller import Controller


@dataclass
class Inbox:
    """Every message the server accepted, parsed, in arrival order."""

    messages: list[Message] = field(default_factory=list)
    refuse: bool = False
    arrived: threading.Condition = field(default_factory=threading.Condition)
    hold_first: bool = False
    first_arrived: threading.Event = field(default_factory=threading.Event)
    gate: threading.Event = field(default_factory=threading.Event)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if self.refuse:
            return "451 Requested action aborted: try again later"
        with self.arrived:
            self.messages.append(message_from_bytes(envelope.original_content or envelope.content))
            self.arrived.notify_all()
            first = len(self.messages) == 1
        if first and self.hold_first:
            self.first_arrived.set()
            # Waited for off the server's loop, so later connections are served meanwhile.
            await asyncio.get_running_loop().run_in_executor(None, self.gate.wait, 120)
        return "250 Message accepted for delivery"

    def to(self, address: str) -> list[Message]:
        return [m for m in self.messages if address in str(m["To"])]

    def wait_for(self, address: str, timeout: float) -> list[Message]:
        """The messages to `address`, waiting (woken by each arrival) until one came or
        `timeout` seconds passed."""
        deadline = time.monotonic() + timeout
        with self.arrived:
            while not self.to(address) and (left := deadline - time.monotonic()) > 0:
                self.arrived.wait(left)
            return self.to(address)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class SmtpServer:
    def __init__(self, *, hold_first: bool = False) -> None:
        self.inbox = Inbox(hold_first=hold_first)
        self.port = free_port()
        self.controller = Controller(self.inbox, hostname="127.0.0.1", port=self.port)

    def start(self) -> "SmtpServer":
        self.controller.start()
        return self

    def stop(self) -> None:
        self.inbox.gate.set()
        self.controller.stop()
