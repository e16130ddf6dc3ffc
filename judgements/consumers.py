"""The live page's websocket: join the judgement's group, and on every engine event
send the page's own partials, rendered from the database."""

from channels.db import DatabaseSyncToAsync, database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.template.loader import render_to_string

from judgements import panel
from judgements.models import Judgement, group_name_for

CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404


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
        # A (re)connecting page may have missed events: send the whole state first.
        await self.send(text_data=await render_update(self.judgement_id))

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(self.group, self.channel_name)

    async def judgement_event(self, event: dict) -> None:
        await self.send(text_data=await render_update(self.judgement_id))
