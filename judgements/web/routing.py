from django.urls import path, re_path

from judgements.web import consumers

websocket_urlpatterns = [
    path("ws/judgements/<int:judgement_id>/", consumers.JudgementConsumer.as_asgi()),
    # Anything else is refused before the handshake, not left to raise "No route found".
    re_path(r"", consumers.UnknownPathConsumer.as_asgi()),
]
