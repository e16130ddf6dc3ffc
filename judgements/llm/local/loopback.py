"""Requests to a local model server on 127.0.0.1, never through a proxy.

An operator's environment may name an HTTP proxy (`HTTP_PROXY`, `http_proxy`); urllib's
default opener would send a loopback request to it, where it fails or, worse, reaches
another machine's port. The servers' start (`lists_model`), at run time and at install, and
the filling of their slots (`warm_rules`) open their requests here; a server's port is
found here too.
"""

import json
import socket
import urllib.request
from http.client import HTTPResponse

_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def open_direct(request: str | urllib.request.Request, timeout: float) -> HTTPResponse:
    """The server's reply to `request`, sent straight to it (urllib's errors raise)."""
    reply: HTTPResponse = _DIRECT.open(request, timeout=timeout)
    return reply


def lists_model(base_url: str, name: str) -> bool:
    """Whether the server at `base_url` answers GET /models with `name` among its models."""
    try:
        with open_direct(f"{base_url}/models", timeout=2.0) as reply:
            listing = json.load(reply)
    except (OSError, ValueError):
        return False
    return any(item.get("id") == name for item in listing.get("data", []))


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now, for a server to take."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
