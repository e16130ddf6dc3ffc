# channels-redis (4.x) ships no types: the Redis channel layer as magi_site/
# channel_layers.py reads it, and as the tests and benchmarks that run a real Redis call
# it (channels_redis/core.py).

from typing import Any

from channels.layers import BaseChannelLayer

class RedisChannelLayer(BaseChannelLayer):
    # Seconds a receive blocks in BZPOPMIN.
    brpop_timeout: int
    def __init__(
        self,
        hosts: list[Any] | None = None,
        prefix: str = "asgi",
        expiry: int = 60,
        group_expiry: int = 86400,
        capacity: int = 100,
        channel_capacity: dict[str, int] | None = None,
        symmetric_encryption_keys: list[str] | None = None,
        random_prefix_length: int = 12,
        serializer_format: str = "msgpack",
    ) -> None: ...
    async def new_channel(self, prefix: str = "specific") -> str: ...
    async def close_pools(self) -> None: ...
