"""Delivering due webhooks and verifying them as a receiver would."""

import json

from asgiref.sync import sync_to_async

from judgements.outcome import webhooks
from tests.support.webhook_receiver import signature_verifies

deliver = sync_to_async(webhooks.deliver_due)


def verify(secret: str, request: dict) -> dict:
    """The webhook's payload, once its signature verifies."""
    assert signature_verifies(secret, request), "the signature does not verify"
    return json.loads(request["body"])
