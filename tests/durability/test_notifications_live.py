"""A reviewer's email survives a dead worker: real PostgreSQL, Redis, worker processes and
SMTP server.

The SMTP server keeps the first message but holds its answer until the test has SIGKILLed
the worker sending it; another worker takes the row over once the lease (the one every
background job uses, judgements/models/leases.py) runs out, and sends it once more, with
the same Message-ID: at least once, never lost, one copy more at most.
"""

import pytest
from django.contrib.auth import get_user_model

from judgements.models import Notification
from tests.support.services import ALIAS, create_judgement, wait_for
from tests.support.smtp_server import SmtpServer

ADDRESS = "ana@example.com"


@pytest.fixture
def smtp():
    server = SmtpServer(hold_first=True).start()
    yield server
    server.stop()


def row(pk: int) -> Notification:
    return Notification.objects.using(ALIAS).get(pk=pk)


def test_an_email_whose_worker_is_killed_is_sent_again_once_by_another(processes, fake_llm, smtp):
    env = {"EMAIL_HOST": "127.0.0.1", "EMAIL_PORT": smtp.port}
    reviewer = get_user_model().objects.db_manager(ALIAS).create(username="ana", email=ADDRESS)
    judgement = create_judgement()
    notification = Notification.objects.using(ALIAS).create(judgement=judgement, user=reviewer)

    first = processes.worker("first", **env)
    assert smtp.inbox.first_arrived.wait(timeout=60), first.log()
    first.kill()
    held = row(notification.pk)
    assert held.sent_at is None and held.lease_owner  # the dead worker still holds it
    smtp.inbox.gate.set()  # the message it sent was kept: a copy will follow

    second = processes.worker("second", **env)
    wait_for(
        lambda: row(notification.pk).sent_at is not None,
        60,
        f"the second worker to send the email:\n{second.log()[-3000:]}",
    )
    sent = row(notification.pk)
    assert sent.lease_owner == "" and sent.lease_expires_at is None and sent.error == ""
    copies = smtp.inbox.to(ADDRESS)
    assert len(copies) == 2
    assert copies[0]["Message-ID"] == copies[1]["Message-ID"]
    assert f"/judgements/{judgement.pk}/" in copies[1].get_payload()
    second.wait_logged("unsent -> sent", 10, "the second worker to log the move")
    assert f"by worker {held.lease_owner}" not in second.log()
