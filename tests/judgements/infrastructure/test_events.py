"""How state changes leave the engine (judgements/infrastructure/events.py): a channel
layer that is away costs one bounded wait, then is skipped for a moment, not waited on per
event."""

import logging

from channels_redis.core import RedisChannelLayer

from judgements.infrastructure import events

# Nothing listens on the discard port.
NOWHERE = "redis://127.0.0.1:9"


async def test_a_layer_that_failed_is_skipped_for_a_moment(caplog, settings):
    settings.MAGI_CHANNEL_SEND_TIMEOUT = 1.0
    away = RedisChannelLayer(hosts=[NOWHERE])
    with caplog.at_level(logging.INFO, logger="judgements.infrastructure.events"):
        assert not await events.send_to_layer(away, away.send("x", {"type": "t"}), "try once")
        assert not await events.send_to_layer(away, away.send("x", {"type": "t"}), "try again")
    assert "could not try once" in caplog.text
    assert "skipped try again" in caplog.text


async def test_the_pause_is_the_failed_layers_own(caplog, settings):
    settings.MAGI_CHANNEL_SEND_TIMEOUT = 1.0
    away = RedisChannelLayer(hosts=[NOWHERE])
    other = RedisChannelLayer(hosts=[NOWHERE])
    with caplog.at_level(logging.INFO, logger="judgements.infrastructure.events"):
        await events.send_to_layer(away, away.send("x", {"type": "t"}), "try one layer")
        await events.send_to_layer(other, other.send("x", {"type": "t"}), "try the other")
    assert "could not try the other" in caplog.text
