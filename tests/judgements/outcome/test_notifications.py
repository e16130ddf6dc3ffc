"""Reviewers told by email when a verdict waits for them (judgements/outcome/
notifications.py), through a real SMTP server on 127.0.0.1."""

from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.mail import EmailMessage, get_connection
from django.utils import timezone

from judgements.configuration import teams
from judgements.intake.start import Submission, submit
from judgements.models import (
    Judgement,
    Notification,
    NotificationChoice,
    NotificationStates,
    Panel,
    Status,
    Team,
)
from judgements.models.leases import expiry
from judgements.outcome import notifications
from tests.support.cases import case_for, validated
from tests.support.smtp_server import SmtpServer
from tests.support.states import bring

pytestmark = pytest.mark.django_db


@pytest.fixture
def smtp(settings) -> Iterator[SmtpServer]:
    server = SmtpServer().start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", server.port
    settings.MAGI_SITE_URL = "https://magi.example.com"
    yield server
    server.stop()


@pytest.fixture
def people(db) -> dict[str, User]:
    return {
        name: User.objects.create_user(name, email=f"{name}@example.com", password="pw")
        for name in ("ana", "bob", "bot", "eve")
    }


@pytest.fixture
def panel(fake_llm, people) -> Panel:
    team = Team.objects.create(name="Payments")
    teams.set_members(team, [people["ana"], people["bob"], people["bot"]], None)
    panel = Panel.objects.create(
        name="Refunds", owner=people["ana"], team=team, agents=case_for()["agents"]
    )
    teams.set_reviewing(panel, None, reviewers=[people["ana"], people["bob"]])
    return panel


def decided(panel: Panel, by: User, *, held: bool, title: str = "Refund 4711") -> Judgement:
    """A judgement of the panel's, decided and contested as the engine leaves it."""
    case = {key: value for key, value in case_for(title=title).items() if key != "agents"}
    judgement = submit([validated({**case, "panel": panel.name})], Submission(creator=by)).judgement
    bring(
        Judgement.objects.filter(pk=judgement.pk),
        Status.APPROVED,
        contested=True,
        hold_contested=held,
        contest_reasons=["The panel split 2-1: Casper decided reject."],
    )
    return Judgement.objects.get(pk=judgement.pk)


def text_of(message) -> str:
    return message.get_payload(decode=True).decode()


def test_a_held_verdict_emails_each_reviewer_once(smtp, settings, panel, people):
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    judgement = decided(panel, people["bot"], held=True)
    assert notifications.deliver("w1") == 2
    assert sorted(m["To"] for m in smtp.inbox.messages) == ["ana@example.com", "bob@example.com"]
    message = smtp.inbox.to("ana@example.com")[0]
    assert message["Subject"] == "MAGI: waiting for your review: Refund 4711"
    text = text_of(message)
    assert "The panel's verdict: Approved, held for a person." in text
    assert "- The panel split 2-1: Casper decided reject." in text
    assert f"https://magi.example.com/judgements/{judgement.pk}/" in text
    # A second sweep sends nothing again.
    assert notifications.deliver("w1") == 0
    assert len(smtp.inbox.messages) == 2


def test_a_contested_verdict_emails_only_where_the_panel_asks(smtp, settings, panel, people):
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    decided(panel, people["bot"], held=False)
    assert notifications.deliver("w1") == 0
    panel.notify_contested = True
    panel.save()
    decided(panel, people["bot"], held=False, title="Refund 4712")
    # Both wait for a person: each reviewer hears of both.
    assert notifications.deliver("w1") == 4
    subjects = sorted(m["Subject"] for m in smtp.inbox.to("ana@example.com"))
    assert subjects == [
        "MAGI: waiting for your review: Refund 4711",
        "MAGI: waiting for your review: Refund 4712",
    ]


def test_four_eyes_leaves_the_author_out(smtp, settings, panel, people):
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    teams.set_reviewing(panel, None, four_eyes=True)
    decided(panel, people["ana"], held=True)
    notifications.deliver("w1")
    assert [m["To"] for m in smtp.inbox.messages] == ["bob@example.com"]


def test_a_person_who_turned_them_off_gets_none(smtp, settings, panel, people):
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    NotificationChoice.objects.create(user=people["bob"], enabled=False)
    decided(panel, people["bot"], held=True)
    notifications.deliver("w1")
    assert [m["To"] for m in smtp.inbox.messages] == ["ana@example.com"]


def test_a_digest_gathers_what_waits_and_comes_once_a_period(smtp, settings, panel, people):
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    NotificationChoice.objects.create(user=people["ana"], digest_minutes=60)
    decided(panel, people["bot"], held=True, title="First")
    notifications.deliver("w1")
    decided(panel, people["bot"], held=True, title="Second")
    notifications.queue()
    # Within the hour: nothing more for ana; bob (a message each) has both.
    assert notifications.send_due("w1") == 1
    assert [m["Subject"] for m in smtp.inbox.to("ana@example.com")] == [
        "MAGI: 1 verdict waiting for your review"
    ]
    assert len(smtp.inbox.to("bob@example.com")) == 2
    # An hour on, the second comes in the next digest.
    later = timezone.now() + timedelta(minutes=61)
    assert notifications.send_due("w1", later) == 1
    digest = smtp.inbox.to("ana@example.com")[-1]
    assert "Second" in text_of(digest) and "First" not in text_of(digest)


def test_a_refusing_smtp_server_keeps_the_notification_for_the_next_sweep(
    smtp, settings, panel, people
):
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    decided(panel, people["bot"], held=True)
    smtp.inbox.refuse = True
    assert notifications.deliver("w1") == 0
    failed = Notification.objects.filter(sent_at__isnull=True)
    assert failed.count() == 2 and all(n.attempts == 1 and n.error for n in failed)
    smtp.inbox.refuse = False
    assert notifications.deliver("w1") == 2
    assert not Notification.objects.filter(sent_at__isnull=True).exists()


def test_a_title_cannot_add_a_header(smtp, settings, panel, people):
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    decided(panel, people["bot"], held=True, title="Refund\nBcc: eve@example.com")
    notifications.deliver("w1")
    message = smtp.inbox.to("ana@example.com")[0]
    assert message["Bcc"] is None
    assert message["Subject"] == "MAGI: waiting for your review: Refund Bcc: eve@example.com"
    assert not smtp.inbox.to("eve@example.com")


def test_what_one_worker_claimed_another_does_not_send(smtp, settings, panel, people):
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    decided(panel, people["bot"], held=True)
    notifications.queue()
    now = timezone.now()
    taken = notifications.claim("w1", now)  # a worker that then stops before sending
    assert len(taken) == 2
    assert notifications.send_due("w2", now) == 0
    # Its lease runs out (the one expiry formula of every background job): another
    # worker sends them.
    assert notifications.send_due("w2", expiry(now) - timedelta(seconds=1)) == 0
    assert notifications.send_due("w2", expiry(now) + timedelta(seconds=1)) == 2
    assert len(smtp.inbox.messages) == 2
    assert not Notification.objects.exclude(lease_owner="").exists()


def test_a_notification_sent_again_after_its_worker_died_is_the_same_message(
    smtp, settings, panel, people
):
    """At least once: a worker that sent the email and died before recording it leaves
    the row to another once its lease runs out. The copy carries the same Message-ID, so
    a mail system that drops duplicates drops it; the dead worker's late record changes
    nothing."""
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    decided(panel, people["bot"], held=True)
    notifications.queue()
    now = timezone.now()
    first = notifications.claim("dead", now)
    connection = get_connection(fail_silently=False)
    # The dead worker's sends went out; it never recorded them.
    ana_row = next(row for row in first if row.user == people["ana"])
    dead_email = EmailMessage("x", "y", to=["ana@example.com"], connection=connection)
    dead_email.extra_headers["Message-ID"] = notifications.message_id([ana_row.pk])
    dead_email.send()
    assert notifications.send_due("w2", expiry(now) + timedelta(seconds=1)) == 2
    to_ana = smtp.inbox.to("ana@example.com")
    assert len(to_ana) == 2 and to_ana[0]["Message-ID"] == to_ana[1]["Message-ID"]
    assert (
        notifications.settle([ana_row.pk], "dead", "sent", NotificationStates.send, sent_at=now)
        == 0
    )
    assert Notification.objects.get(pk=ana_row.pk).sent_at != now
