"""The live page's websocket: join the judgement's group, and on every engine event
send the page's own partials, rendered from the database. A socket lives only as long as
the login session it was opened in."""

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Mapping
from importlib import import_module
from typing import NamedTuple
from urllib.parse import parse_qs

from channels.generic.websocket import AsyncWebsocketConsumer
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, load_backend
from django.contrib.auth.models import User
from django.template.loader import render_to_string
from django.utils.crypto import constant_time_compare

from judgements.infrastructure import events
from judgements.infrastructure.database import db_call
from judgements.models import Judgement
from judgements.models.magi_settings import magi_settings
from judgements.web import live_page

log = logging.getLogger(__name__)

CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404
# 1011 makes the htmx ws extension reconnect (and so resync) after a pause.
CLOSE_TRY_AGAIN = 1011


def session_group_name(session_key: str) -> str:
    """The group of one login session's sockets; hashed, so the channel layer (Redis)
    never holds a session key someone could log in with."""
    return "session-" + hashlib.sha256(session_key.encode()).hexdigest()[:40]


async def close_session_sockets(session_key: str) -> None:
    """Tell every open socket of this login session to close (on logout). Best effort: with
    the channel layer away, each socket finds its session gone on its next update."""
    layer = get_channel_layer()
    if layer is not None:
        await events.send_to_layer(
            layer,
            layer.group_send(session_group_name(session_key), {"type": "session.ended"}),
            "close a logged-out session's sockets",
        )


def session_is_live_sync(session_key: str | None, user_id: int) -> bool:
    """The login session still exists, unexpired, for the same user, and would still log
    that user in: as Django's own check on every request, the user is active and the
    password has not changed since (the session's hash of it still matches)."""
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key=session_key)
    data = store.load()
    backend_path = data.get(BACKEND_SESSION_KEY)
    if (
        data.get(SESSION_KEY) != str(user_id)
        or backend_path not in settings.AUTHENTICATION_BACKENDS
    ):
        return False
    user = load_backend(backend_path).get_user(user_id)
    session_hash = data.get(HASH_SESSION_KEY)
    if user is None or not session_hash:
        return False
    # Read only: Django's get_user would also rotate a session signed with an old
    # SECRET_KEY, which is the HTTP request's job, not a socket's.
    hashes = [user.get_session_auth_hash(), *user.get_session_auth_fallback_hash()]
    return any(constant_time_compare(session_hash, known) for known in hashes)


def visible_sync(user: User, judgement_id: int) -> bool:
    judgement = Judgement.objects.filter(pk=judgement_id).first()
    return judgement is not None and judgement.visible_to(user)


class Rendered(NamedTuple):
    """The page's live partials; whether they bring the review part (they do when the
    page was drawn before the judgement ended and it has ended since, for the page to
    fetch: its forms need a CSRF token, which only a request gets; only then, as sent
    again it would empty a form being typed in); and the story's other levels, whose
    events redraw the page (PanelView.followed_levels; none for a judgement that is no
    story)."""

    html: str
    ended_now: bool
    levels: list[int]


def render_update_sync(judgement_id: int, drawn_running: bool = False) -> Rendered:
    view = live_page.load(judgement_id)
    ended_now = drawn_running and view.judgement.is_finished
    context = {"panel": view, "ended_now": ended_now}
    html = render_to_string("judgements/_live_update.html", context)
    return Rendered(html, ended_now, view.followed_levels)


# Rendering only reads, so it runs in the thread pool instead of queueing behind the
# engine's writes on the one thread-sensitive thread.
render_update = db_call(render_update_sync, for_request=True)
session_is_live = db_call(session_is_live_sync, for_request=True)
visible = db_call(visible_sync, for_request=True)


class UnknownPathConsumer(AsyncWebsocketConsumer):
    """Any websocket path but a live page's: refused before the handshake (HTTP 403)."""

    async def connect(self) -> None:
        await self.close()


class JudgementConsumer(AsyncWebsocketConsumer):
    closing = False

    async def connect(self) -> None:
        user = self.scope.get("user")
        self.judgement_id = int(self.scope["url_route"]["kwargs"]["judgement_id"])
        self.group = events.group_name_for(self.judgement_id)
        self.session_key = getattr(self.scope.get("session"), "session_key", None)
        # AuthMiddlewareStack's user is a lazy User, or AnonymousUser when signed out.
        if not isinstance(user, User) or not user.is_authenticated or not self.session_key:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.user_id = user.pk
        if not await visible(user, self.judgement_id):
            await self.close(code=CLOSE_NOT_FOUND)
            return
        self.session_group = session_group_name(self.session_key)
        await self.channel_layer.group_add(self.session_group, self.channel_name)
        await self.channel_layer.group_add(self.group, self.channel_name)
        # The groups of the story's other levels (send_state joins them).
        self.followed: set[str] = set()
        await self.accept()
        self.last_sent = ""
        # A page drawn before the judgement ended has no review forms: they come with
        # the first state sent after the end, on connect if it ended in between.
        self.drawn_running = parse_qs(self.scope.get("query_string", b"").decode()).get(
            "rendered"
        ) == ["running"]
        # A (re)connecting page may have missed events: send the whole state first.
        await self.send_state()
        self.resync = asyncio.create_task(self.resync_forever())

    async def disconnect(self, code: int) -> None:
        if resync := getattr(self, "resync", None):
            resync.cancel()
        groups = [self.group, getattr(self, "session_group", None)]
        for group in groups + sorted(getattr(self, "followed", ())):
            if group:
                with contextlib.suppress(Exception):
                    await self.channel_layer.group_discard(group, self.channel_name)

    # A channel-layer message (events.publish); the page is redrawn from the database.
    async def judgement_event(self, event: Mapping[str, object]) -> None:
        await self.send_state()

    async def session_ended(self, event: Mapping[str, object]) -> None:
        await self.close_once(CLOSE_UNAUTHENTICATED)

    async def close_once(self, code: int) -> None:
        if not self.closing:
            self.closing = True
            await self.close(code=code)

    async def send_state(self, *, only_if_changed: bool = False) -> bool:
        """Send the page's partials; False once the socket is closing."""
        # Logout tells the socket to close, but that message can be lost: a socket whose
        # session is gone closes instead of sending the judgement on.
        if self.closing or not await session_is_live(self.session_key, self.user_id):
            await self.close_once(CLOSE_UNAUTHENTICATED)
            return False
        html, ended, levels = await render_update(self.judgement_id, self.drawn_running)
        if await self.follow(levels):
            # A level it did not follow yet is in the story: drawn again once it is
            # followed, so nothing that level did before is missed (docs/escalation.md).
            html, ended, _ = await render_update(self.judgement_id, self.drawn_running)
        if only_if_changed and html == self.last_sent:
            return True
        if ended:
            self.drawn_running = False  # the forms are on their way: once is enough
        self.last_sent = html
        await self.send(text_data=html)
        return True

    async def follow(self, levels: list[int]) -> bool:
        """Join the groups of the story's other levels, each once, for their events to
        redraw this page; whether one was new."""
        new = {events.group_name_for(pk) for pk in levels} - self.followed
        for group in sorted(new):
            await self.channel_layer.group_add(group, self.channel_name)
        self.followed |= new
        return bool(new)

    async def resync_forever(self) -> None:
        while True:
            # Events can be lost (a Redis restart forgets group memberships), so now and
            # then join the groups again and send the state if it changed.
            await asyncio.sleep(magi_settings.MAGI_WS_RESYNC_SECONDS)
            try:
                await self.channel_layer.group_add(self.group, self.channel_name)
                await self.channel_layer.group_add(self.session_group, self.channel_name)
                for group in sorted(self.followed):
                    await self.channel_layer.group_add(group, self.channel_name)
                if not await self.send_state(only_if_changed=True):
                    return
            except Exception:
                log.warning("resync of %s failed; asking the page to reconnect", self.group)
                await self.close_once(CLOSE_TRY_AGAIN)
                return
