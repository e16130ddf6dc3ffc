"""The live pages' channel layer: in memory by default, Redis when REDIS_URL is set, its
socket waiting longer than the layer's blocking receive (redis-py 8's 5 s default
timed an idle receive out: django/channels_redis issue 422)."""

import asyncio

import pytest
from channels_redis.core import RedisChannelLayer

from magi_site.channel_layers import channel_layers
from tests.support.services import Redis


@pytest.fixture(scope="module")
def redis_url():
    server = Redis().start()
    yield server.url
    server.stop()


def test_without_redis_the_layer_is_one_process_memory():
    assert channel_layers(None)["default"]["BACKEND"] == "channels.layers.InMemoryChannelLayer"


def test_the_socket_outwaits_the_blocking_receive():
    (host,) = channel_layers("redis://127.0.0.1:6379/0")["default"]["CONFIG"]["hosts"]
    assert host["socket_timeout"] > RedisChannelLayer.brpop_timeout


def test_a_message_goes_through_the_real_server(redis_url):
    config = channel_layers(redis_url)["default"]["CONFIG"]

    async def round_trip() -> dict:
        layer = RedisChannelLayer(**config)
        channel = await layer.new_channel()
        await layer.send(channel, {"type": "verdict.ready", "id": 7})
        received = await layer.receive(channel)
        await layer.flush()
        return received

    assert asyncio.run(round_trip()) == {"type": "verdict.ready", "id": 7}
