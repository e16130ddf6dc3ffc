from django.conf import settings
from django.urls import path

from judgements import consumers, worker

websocket_urlpatterns = [
    path("ws/judgements/<int:judgement_id>/", consumers.JudgementConsumer.as_asgi()),
]

channel_routes = {settings.MAGI_ENGINE_CHANNEL: worker.EngineConsumer.as_asgi()}
