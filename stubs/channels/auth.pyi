# The session and user middleware around the websocket routes (magi_site/asgi.py).

from typing import Any

def AuthMiddlewareStack(inner: Any) -> Any: ...
