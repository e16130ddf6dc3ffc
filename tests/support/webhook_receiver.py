"""A webhook receiver on loopback for tests, and the signature check a receiver makes.

It answers each POST with the next scripted status (200 once the script runs out) and
keeps what it was sent. With `hold_first`, the first request waits until `gate` is set:
how a test holds a delivery in flight without sleeping.
"""

import base64
import hashlib
import hmac
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    def __init__(self, *, hold_first: bool = False) -> None:
        self.answers: list[int] = []
        self.received: list[dict] = []
        self.first_arrived = threading.Event()
        self.gate = threading.Event()
        if not hold_first:
            self.gate.set()
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with receiver.lock:
                    receiver.received.append(
                        {"headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
                    )
                    first = len(receiver.received) == 1
                    status = receiver.answers.pop(0) if receiver.answers else 200
                if first:
                    receiver.first_arrived.set()
                    receiver.gate.wait(timeout=120)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # A short poll: stop() waits for the loop to notice, up to one interval per test.
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/magi-hook"

    def stop(self) -> None:
        self.gate.set()
        self.server.shutdown()
        self.server.server_close()


def signature_verifies(secret: str, request: dict) -> bool:
    """Check a webhook as a receiver would, from the Standard Webhooks convention alone."""
    headers = request["headers"]
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + request["body"]
    key = base64.b64decode(secret.removeprefix("whsec_"))
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    versions = dict(s.split(",", 1) for s in headers["webhook-signature"].split())
    return hmac.compare_digest(versions.get("v1", ""), expected)
