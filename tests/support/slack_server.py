"""A Slack Web API server on 127.0.0.1 for tests: MAGI's real slack_sdk WebClient talks to
it over HTTP (MAGI_SLACK_API_URL), unpatched.

It answers the methods MAGI calls (auth.test, chat.postMessage, chat.update,
chat.postEphemeral, views.open, users.info, users.lookupByEmail) as Slack documents them,
records every call, and can be scripted: a method's next answers (`script`: a 429 with
its Retry-After, an HTTP 500, or an `{"ok": false, "error": ...}`), a token Slack revoked
(`revoke`: every call answers invalid_auth), its users and their emails (`add_user`),
and, with `hold_first`, a first chat.postMessage that is recorded but not answered until
`gate` is set: how a test holds a post in flight and kills its worker without sleeping.
"""

import itertools
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

TEAM_ID = "T0MAGI"
BOT_USER = "UBOTMAGI"


@dataclass
class Call:
    method: str
    params: dict
    token: str


@dataclass
class Scripted:
    """One scripted answer: an HTTP status other than 200 (with Retry-After for a 429),
    or Slack's own refusal (`error`, with HTTP 200)."""

    status: int = 200
    error: str = ""
    retry_after: int | None = None


@dataclass
class SlackUser:
    id: str
    email: str
    confirmed: bool = True
    team_id: str = TEAM_ID


@dataclass
class State:
    calls: list[Call] = field(default_factory=list)
    scripts: dict[str, list[Scripted]] = field(default_factory=dict)
    revoked: set[str] = field(default_factory=set)
    users: dict[str, SlackUser] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    arrived: threading.Condition = field(default_factory=threading.Condition)


class SlackServer:
    def __init__(self, *, hold_first: bool = False) -> None:
        self.state = State()
        self.hold_first = hold_first
        self.first_arrived = threading.Event()
        self.gate = threading.Event()
        if not hold_first:
            self.gate.set()
        self.timestamps = itertools.count(1)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.serve(self)

            def do_POST(self) -> None:
                server.serve(self)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/api/"

    def stop(self) -> None:
        self.gate.set()
        self.server.shutdown()
        self.server.server_close()

    # --- scripting -----------------------------------------------------------------

    def reset(self) -> None:
        """Forget the calls, scripts, revocations and users: a fresh server for the next
        test of a session that shares it."""
        with self.state.lock:
            self.state.calls.clear()
            self.state.scripts.clear()
            self.state.revoked.clear()
            self.state.users.clear()

    def script(self, method: str, *answers: Scripted) -> None:
        with self.state.lock:
            self.state.scripts.setdefault(method, []).extend(answers)

    def revoke(self, token: str) -> None:
        with self.state.lock:
            self.state.revoked.add(token)

    def add_user(self, slack_id: str, email: str, *, confirmed: bool = True) -> None:
        with self.state.lock:
            self.state.users[slack_id] = SlackUser(slack_id, email, confirmed)

    # --- what it was sent ----------------------------------------------------------

    def calls(self, method: str | None = None) -> list[Call]:
        with self.state.lock:
            return [c for c in self.state.calls if method is None or c.method == method]

    def wait_for(self, method: str, count: int, timeout: float = 30) -> list[Call]:
        """The calls of `method`, waiting (woken by each arrival) until there are `count`."""
        with self.state.arrived:
            self.state.arrived.wait_for(lambda: len(self.calls(method)) >= count, timeout)
        return self.calls(method)

    # --- answering -----------------------------------------------------------------

    def serve(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        method = parts.path.removeprefix("/api/")
        params: dict = {k: v[0] for k, v in parse_qs(parts.query).items()}
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        if raw:
            if "json" in (handler.headers.get("Content-Type") or ""):
                params.update(json.loads(raw))
            else:
                params.update({k: v[0] for k, v in parse_qs(raw.decode()).items()})
        token = (handler.headers.get("Authorization") or "").removeprefix("Bearer ")
        with self.state.lock:
            self.state.calls.append(Call(method, params, token))
            first_post = (
                method == "chat.postMessage"
                and len([c for c in self.state.calls if c.method == method]) == 1
            )
            scripted = self.state.scripts.get(method, [])
            answer = scripted.pop(0) if scripted else None
            revoked = token in self.state.revoked
        with self.state.arrived:
            self.state.arrived.notify_all()
        if first_post and self.hold_first:
            self.first_arrived.set()
            self.gate.wait(timeout=120)
        if revoked:
            answer = Scripted(error="invalid_auth")
        if answer is not None and answer.status != 200:
            body = json.dumps(
                {"ok": False, "error": "ratelimited" if answer.status == 429 else "fatal_error"}
            )
            headers = (
                {"Retry-After": str(answer.retry_after)} if answer.retry_after is not None else {}
            )
            return self.reply(handler, answer.status, body, headers)
        if answer is not None and answer.error:
            return self.reply(handler, 200, json.dumps({"ok": False, "error": answer.error}))
        return self.reply(handler, 200, json.dumps(self.answer(method, params)))

    def answer(self, method: str, params: dict) -> dict:
        if method == "auth.test":
            return {
                "ok": True,
                "user": "magi",
                "team": "MAGI tests",
                "team_id": TEAM_ID,
                "user_id": BOT_USER,
            }
        if method == "chat.postMessage":
            channel = str(params.get("channel", ""))
            where = channel if channel[:1] in ("C", "G") else "D" + channel
            return {"ok": True, "channel": where, "ts": f"{next(self.timestamps)}.000100"}
        if method == "chat.update":
            return {"ok": True, "channel": params.get("channel"), "ts": params.get("ts")}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": f"{next(self.timestamps)}.000200"}
        if method == "views.open":
            return {"ok": True, "view": {"id": "V0MAGI"}}
        if method == "users.info":
            user = self.state.users.get(str(params.get("user")))
            if user is None:
                return {"ok": False, "error": "user_not_found"}
            return {"ok": True, "user": self.user_object(user)}
        if method == "users.lookupByEmail":
            email = str(params.get("email", "")).lower()
            for user in self.state.users.values():
                if user.email.lower() == email:
                    return {"ok": True, "user": self.user_object(user)}
            return {"ok": False, "error": "users_not_found"}
        return {"ok": False, "error": "unknown_method"}

    @staticmethod
    def user_object(user: SlackUser) -> dict:
        return {
            "id": user.id,
            "team_id": user.team_id,
            "name": user.email.split("@")[0],
            "deleted": False,
            "is_bot": False,
            "is_email_confirmed": user.confirmed,
            "profile": {"email": user.email},
        }

    @staticmethod
    def reply(
        handler: BaseHTTPRequestHandler, status: int, body: str, headers: dict | None = None
    ) -> None:
        data = body.encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json; charset=utf-8")
        handler.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)
