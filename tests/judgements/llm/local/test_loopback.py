"""A request to a local model server goes straight to it, whatever proxy the environment
names (judgements/llm/local/loopback.py)."""

import http.server
import importlib
import threading
from collections.abc import Iterator

import pytest

from judgements.llm.local import loopback


class Recording(http.server.HTTPServer):
    """A server on a free loopback port that answers every GET with its name and keeps
    the request lines it read."""

    def __init__(self, name: str) -> None:
        super().__init__(("127.0.0.1", 0), Answering)
        self.name = name
        self.seen: list[str] = []


class Answering(http.server.BaseHTTPRequestHandler):
    server: Recording

    def do_GET(self) -> None:
        self.server.seen.append(self.path)
        body = self.server.name.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def servers() -> Iterator[list[Recording]]:
    started: list[Recording] = []
    yield started
    for server in started:
        server.shutdown()
        server.server_close()


def listening(started: list[Recording], name: str) -> Recording:
    server = Recording(name)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    started.append(server)
    return server


@pytest.fixture
def proxied(servers, monkeypatch) -> Iterator[Recording]:
    """A proxy named in the environment before MAGI's modules are read, as an operator's
    shell would name one."""
    proxy = listening(servers, "the proxy")
    for name in ("HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{proxy.server_port}")
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    importlib.reload(loopback)
    yield proxy
    monkeypatch.undo()
    importlib.reload(loopback)


def test_a_proxy_in_the_environment_never_sees_a_loopback_request(servers, proxied):
    model_server = listening(servers, "the model server")
    url = f"http://127.0.0.1:{model_server.server_port}/models"
    with loopback.open_direct(url, timeout=5.0) as reply:
        assert reply.read() == b"the model server"
    assert model_server.seen == ["/models"]
    assert proxied.seen == []
