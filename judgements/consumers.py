"""The live page's websocket: join the judgement's group, and on every engine event
send the page's own partials, rendered from the database."""

import asyncio
import contextlib
import logging

from channels.db import DatabaseSyncToAsync, database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.template.loader import render_to_string

from judgements import panel
from judgements.models import Judgement, group_name_for

log = logging.getLogger(__name__)

CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404
# 1011 makes the htmx ws extension reconnect (and so resync) after a pause.
CLOSE_TRY_AGAIN = 1011


@database_sync_to_async
def visible(user, judgement_id: int) -> bool:
    judgement = Judgement.objects.filter(pk=judgement_id).first()
    return judgement is not None and judgement.visible_to(user)


def render_update_sync(judgement_id: int) -> str:
    return render_to_string("judgements/_live_update.html", {"panel": panel.load(judgement_id)})


# Rendering only reads, so it runs in the thread pool instead of queueing behind the
# engine's writes on the one thread-sensitive thread.
render_update = DatabaseSyncToAsync(render_update_sync, thread_sensitive=False)


class JudgementConsumer(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        self.judgement_id = int(self.scope["url_route"]["kwargs"]["judgement_id"])
        self.group = group_name_for(self.judgement_id)
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        if not await visible(user, self.judgement_id):
            await self.close(code=CLOSE_NOT_FOUND)
            return
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        self.last_sent = ""
        # A (re)connecting page may have missed events: send the whole state first.
        await self.send_state()
        self.resync = asyncio.create_task(self.resync_forever())

    async def disconnect(self, code: int) -> None:
        if resync := getattr(self, "resync", None):
            resync.cancel()
        with contextlib.suppress(Exception):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def judgement_event(self, event: dict) -> None:
        await self.send_state()

    async def send_state(self, *, only_if_changed: bool = False) -> None:
        html = await render_update(self.judgement_id)
        if only_if_changed and html == self.last_sent:
            return
        self.last_sent = html
        await self.send(text_data=html)

    async def resync_forever(self) -> None:
        while True:
            # Events can be lost (a Redis restart forgets group memberships), so now and
            # then join the group again and send the state if it changed.
            await asyncio.sleep(settings.MAGI_WS_RESYNC_SECONDS)
            try:
                await self.channel_layer.group_add(self.group, self.channel_name)
                await self.send_state(only_if_changed=True)
            except Exception:
                log.warning("resync of %s failed; asking the page to reconnect", self.group)
                await self.close(code=CLOSE_TRY_AGAIN)
                return
