"""A running MAGI's HTTP API from outside (magi_client/http.py): what each answer
becomes, against a real HTTP server on loopback."""

import http.server
import json
import threading

import pytest

from magi_client.http import Refused, RetryLater, Server, Unreachable


class Answers(http.server.BaseHTTPRequestHandler):
    """Answers every request with the server's `status`, a JSON error and its fields."""

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        status = self.server.status  # type: ignore[attr-defined]
        ok = status < 300
        body = json.dumps({"id": 7} if ok else {"error": "No.", "errors": {"title": ["Blank."]}})
        self.send_response(status)
        if status == 429:
            self.send_header("Retry-After", "12")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())


@pytest.fixture
def site():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answers)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


def call(site, status: int) -> dict:
    site.status = status
    host, port = site.server_address
    return Server(f"http://{host}:{port}/", "a-token", timeout=10).call("POST", "/api/x/", {})


def test_a_2xx_gives_its_json(site):
    assert call(site, 201) == {"id": 7}


def test_a_refusal_is_final_and_names_the_fields(site):
    with pytest.raises(Refused) as refused:
        call(site, 422)
    assert not isinstance(refused.value, RetryLater)
    assert str(refused.value) == "refused (422): No.: title: Blank."


def test_a_limit_is_worth_another_try_after_its_retry_after(site):
    with pytest.raises(RetryLater) as later:
        call(site, 429)
    assert (str(later.value), later.value.after) == ("refused for now: No.: title: Blank.", 12)


def test_a_server_error_is_worth_another_try(site):
    with pytest.raises(RetryLater) as later:
        call(site, 503)
    assert str(later.value) == "server error 503: No.: title: Blank."
    assert not isinstance(later.value, Unreachable)


def test_no_server_is_unreachable():
    with pytest.raises(Unreachable) as away:
        Server("http://127.0.0.1:9", "a-token", timeout=10).call("GET", "/api/x/")
    assert str(away.value).startswith("cannot reach http://127.0.0.1:9: ")
