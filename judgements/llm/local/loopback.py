"""Requests to a local model server on 127.0.0.1, never through a proxy.

An operator's environment may name an HTTP proxy (`HTTP_PROXY`, `http_proxy`); urllib's
default opener would send a loopback request to it, where it fails or, worse, reaches
another machine's port. The servers' start (`servers.lists_model`) and the filling of
their slots (`warm_rules`) open their requests here.
"""

import urllib.request
from http.client import HTTPResponse

_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def open_direct(request: str | urllib.request.Request, timeout: float) -> HTTPResponse:
    """The server's reply to `request`, sent straight to it (urllib's errors raise)."""
    reply: HTTPResponse = _DIRECT.open(request, timeout=timeout)
    return reply
