"""A running MAGI's HTTP API, from outside: one request with an API token, its JSON
answer, and why it failed in words (unreachable, refused, or worth another try). No
Django: it runs in programs that talk to a MAGI elsewhere, `magi gate` (gate.py), `magi
plan`, `apply` and `export` (config.py) and the server's `magi mcp`
(judgements/agent_tools/remote.py), each of which says in its own terms what a failure
means (an exit status, a tool's refusal)."""

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from magi_client.json_values import JsonObject

# Between tries after a refusal (429 without Retry-After), a 5xx or a dropped connection.
RETRY_SECONDS = 2.0


def whole(answer: JsonObject, key: str) -> int:
    """A whole number the server answered as `key`; RequestFailed when it did not."""
    value = answer.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestFailed(f"The server answered {key} = {value!r}, not a whole number.")
    return value


class RequestFailed(Exception):
    """A request that brought no answer to use; the message says why."""


class Refused(RequestFailed):
    """The server refused the request (a 4xx other than 429): trying again will not help.
    `errors`: the answer's invalid fields by path, for a caller that tells them apart."""

    def __init__(
        self, message: str, status: int = 400, answer: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.answer = answer or {}
        self.errors: dict[str, list[str]] = self.answer.get("errors") or {}


class RetryLater(RequestFailed):
    """A failure a later try may get past (the server busy, failing or over a limit)."""

    def __init__(self, message: str, after: float = RETRY_SECONDS) -> None:
        super().__init__(message)
        self.after = after


class OverBudget(Refused):
    """402: a spending limit cannot cover the request until it resets."""


class Unreachable(RetryLater):
    """No answer at all: the server is away, or the connection dropped or timed out."""


@dataclass
class Server:
    url: str
    token: str
    timeout: float  # per HTTP request, on top of its ?wait

    def call(
        self,
        method: str,
        path: str,
        body: Mapping[str, object] | None = None,
        headers: dict[str, str] | None = None,
    ) -> JsonObject:
        """One request; the JSON answer of a 2xx. Raises Refused, or RetryLater (Unreachable
        among them) for what a later try may get past."""
        answer: JsonObject = json.loads(self.send(method, path, body, headers) or b"{}")
        return answer

    def text(self, method: str, path: str) -> str:
        """One request whose answer is text (a suite's JSONL), as UTF-8."""
        return self.send(method, path, None, {"Accept": "*/*"}).decode("utf-8")

    def send(
        self,
        method: str,
        path: str,
        body: Mapping[str, object] | None,
        headers: dict[str, str] | None,
    ) -> bytes:
        request = urllib.request.Request(
            self.url.rstrip("/") + path,
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={
                "Authorization": f"Bearer {self.token}",
                "Content-Type": "application/json",
                "Accept": "application/json",
                **(headers or {}),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return bytes(response.read())
        except urllib.error.HTTPError as refused:
            raise refusal(refused) from None
        except (urllib.error.URLError, ConnectionError, TimeoutError) as away:
            raise Unreachable(f"cannot reach {self.url}: {reason(away)}") from None


def reason(error: Exception) -> str:
    return str(getattr(error, "reason", None) or error)


def refusal(refused: urllib.error.HTTPError) -> RequestFailed:
    try:
        answer = json.loads(refused.read() or b"{}")
    except ValueError:
        answer = {}
    if not isinstance(answer, dict):
        answer = {}
    message = answer.get("error") or refused.reason
    fields = answer.get("errors") or {}
    if fields:
        message += ": " + "; ".join(f"{f}: {' '.join(m)}" for f, m in fields.items())
    if refused.code == 429:
        after = float(refused.headers.get("Retry-After") or RETRY_SECONDS)
        return RetryLater(f"refused for now: {message}", after)
    if refused.code >= 500:
        return RetryLater(f"server error {refused.code}: {message}")
    if refused.code == 402:
        return OverBudget(f"refused (402): {message}", 402, answer)
    return Refused(f"refused ({refused.code}): {message}", refused.code, answer)
