"""The channel layer the live pages' websockets share: Redis when REDIS_URL is set, else
one process's memory (the embedded default)."""

from typing import Any

from channels_redis.core import RedisChannelLayer

# redis-py 8 reads with a 5 s socket timeout by default, the same 5 s a channel layer's
# receive blocks in BZPOPMIN: the read then often times out first, and every idle live
# page's consumer dies with "Timeout reading from" (django/channels_redis issue 422). The
# socket waits longer than the blocking pop, so an idle wait ends in the pop's own empty
# answer, and a dead server is still noticed.
SOCKET_TIMEOUT_SECONDS = 3 * RedisChannelLayer.brpop_timeout


def channel_layers(redis_url: str | None) -> dict[str, Any]:
    if not redis_url:
        return {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    host = {"address": redis_url, "socket_timeout": SOCKET_TIMEOUT_SECONDS}
    return {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [host], "capacity": 1000, "expiry": 60},
        }
    }
