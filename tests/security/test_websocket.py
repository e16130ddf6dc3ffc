"""The live page's websocket as an attacker meets it: unknown paths, other origins (another
site, another port or scheme of ours), and sockets that outlive their login."""

import logging
import socket

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from judgements.models import Judgement
from magi_site.asgi import application
from tests.support.sessions import session_cookie

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("no_in_process_engine"),
]

UNKNOWN_PATHS = [
    "/",
    "/ws/",
    "/ws/nope/",
    "/ws/judgements/",
    "/ws/judgements/abc/",
    "/ws/judgements/1/extra/",
    "/ws/judgements/-1/",
    "/admin/",
    "/ws/judgements/%00/",
]


async def open_socket(path: str, headers: list[tuple[bytes, bytes]]) -> bool:
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await communicator.connect(timeout=5)
    if connected:
        await communicator.disconnect()
    return connected


@pytest.mark.parametrize("path", UNKNOWN_PATHS)
async def test_it_refuses_a_socket_to_an_unknown_path_without_an_error(path, user, caplog):
    headers = [
        (b"origin", b"http://localhost"),
        (b"host", b"localhost"),
        (b"cookie", (await session_cookie(user)).encode()),
    ]
    with caplog.at_level(logging.WARNING):
        assert not await open_socket(path, headers)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def handshake(site, path: str, origin: str | None, host: str | None = None) -> int:
    """Open a websocket the way a browser does and return the HTTP status of the answer."""
    lines = [
        f"GET {path} HTTP/1.1",
        f"Host: {host or f'127.0.0.1:{site.port}'}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
        f"Cookie: sessionid={next(iter(site.sessions.values()))}",
    ]
    if origin:
        lines.append(f"Origin: {origin}")
    with socket.create_connection(("127.0.0.1", site.port), timeout=10) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        status_line = sock.makefile("rb").readline().decode()
    return int(status_line.split()[1])


def test_daphne_refuses_unknown_paths_with_403_and_logs_no_traceback(live_site):
    origin = live_site.url
    for path in UNKNOWN_PATHS:
        assert handshake(live_site, path, origin) == 403, path
    log = live_site.log()
    assert "Traceback" not in log and "No route found" not in log, log


def test_daphne_refuses_a_page_on_another_port_of_the_same_host(live_site):
    path = "/ws/judgements/1/"
    for origin in ("http://127.0.0.1:9999", "http://127.0.0.1", "https://127.0.0.1:9999"):
        assert handshake(live_site, path, origin) == 403, origin
    assert "Traceback" not in live_site.log()


# (Host header the socket was opened on, Origin of the page, extra headers) -> accepted.
Opening = tuple[str, str, list[tuple[bytes, bytes]]]
SAME_ORIGIN: list[Opening] = [
    ("127.0.0.1:8000", "http://127.0.0.1:8000", []),
    ("localhost", "http://localhost", []),
    ("localhost", "http://localhost:80", []),
    ("LOCALHOST:8000", "http://localhost:8000", []),
    ("[::1]:8000", "http://[::1]:8000", []),
]
OTHER_ORIGIN: list[Opening] = [
    ("127.0.0.1:8000", "http://127.0.0.1:9999", []),
    ("127.0.0.1:8000", "http://127.0.0.1", []),
    ("127.0.0.1", "http://127.0.0.1:8000", []),
    ("127.0.0.1:8000", "https://127.0.0.1:8000", []),
    ("127.0.0.1:8000", "http://localhost:8000", []),
    ("127.0.0.1:8000", "http://evil.example", []),
    ("127.0.0.1:8000", "http://127.0.0.1:8000.evil.example", []),
    ("127.0.0.1:8000", "null", []),
    ("127.0.0.1:8000", "", []),
    ("127.0.0.1:8000", "file://", []),
    ("127.0.0.1:8000", "http://127.0.0.1:notaport", []),
    # Host and Origin agree, but the host is not one we serve.
    ("evil.example", "http://evil.example", []),
    # The proxy header counts only when MAGI runs behind a TLS proxy (MAGI_HTTPS).
    ("localhost", "https://localhost", [(b"x-forwarded-proto", b"https")]),
]


async def socket_from(user, host: str, origin: str, extra: list) -> bool:
    headers = [(b"host", host.encode()), (b"cookie", (await session_cookie(user)).encode())]
    if origin:
        headers.append((b"origin", origin.encode()))
    judgement = await Judgement.objects.filter(creator=user).afirst()
    assert judgement is not None
    return await open_socket(f"/ws/judgements/{judgement.pk}/", headers + extra)


@pytest.fixture
def judgement_of(make_judgement):
    return sync_to_async(lambda user: make_judgement(creator=user))


@pytest.mark.parametrize(("host", "origin", "extra"), SAME_ORIGIN)
async def test_it_accepts_the_page_served_from_the_same_scheme_host_and_port(
    host, origin, extra, user, judgement_of
):
    await judgement_of(user)
    assert await socket_from(user, host, origin, extra)


@pytest.mark.parametrize(("host", "origin", "extra"), OTHER_ORIGIN)
async def test_it_refuses_a_page_from_any_other_origin(host, origin, extra, user, judgement_of):
    await judgement_of(user)
    assert not await socket_from(user, host, origin, extra)


async def test_behind_a_tls_proxy_it_accepts_the_https_page_only(user, judgement_of, settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.ALLOWED_HOSTS = ["magi.example"]
    await judgement_of(user)
    proxied = [(b"x-forwarded-proto", b"https")]
    assert await socket_from(user, "magi.example", "https://magi.example", proxied)
    assert not await socket_from(user, "magi.example", "http://magi.example", proxied)
    assert not await socket_from(user, "magi.example", "https://magi.example", [])
    assert not await socket_from(user, "magi.example", "https://magi.example:8443", proxied)


async def test_it_accepts_an_origin_listed_in_csrf_trusted_origins(user, judgement_of, settings):
    settings.CSRF_TRUSTED_ORIGINS = ["http://app.example:8080", "https://*.magi.example"]
    await judgement_of(user)
    assert await socket_from(user, "localhost", "http://app.example:8080", [])
    assert not await socket_from(user, "localhost", "http://app.example:8081", [])
    assert not await socket_from(user, "localhost", "https://app.example:8080", [])
    assert await socket_from(user, "localhost", "https://eu.magi.example", [])
    assert not await socket_from(user, "localhost", "https://magi.example.evil", [])
    assert not await socket_from(user, "localhost", "http://eu.magi.example", [])
    assert not await socket_from(user, "localhost", "https://evilmagi.example", [])


async def test_it_refuses_a_judgement_id_beyond_what_the_database_holds(user, caplog):
    headers = [
        (b"origin", b"http://localhost"),
        (b"host", b"localhost"),
        (b"cookie", (await session_cookie(user)).encode()),
    ]
    with caplog.at_level(logging.WARNING):
        assert not await open_socket(f"/ws/judgements/{10**30}/", headers)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
