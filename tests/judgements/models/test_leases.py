"""The one lease of every background job (judgements/models/leases.py): a judgement, a
webhook delivery and a reviewer's email are claimed, renewed, released and taken over
after expiry by the same queryset methods and the same expiry formula."""

from collections.abc import Callable
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import models
from django.utils import timezone

from judgements.models import Judgement, JudgementStates, Notification, WebhookDelivery
from judgements.models.leases import LeaseQuerySet, expiry

pytestmark = pytest.mark.django_db

Make = Callable[[], models.Model]


@pytest.fixture(params=["judgement", "webhook delivery", "notification"])
def kind(request, make_judgement, user) -> tuple[type[models.Model], Make, dict]:
    """A kind of background work, how to make one free row of it, and what its claim
    writes beside the lease (a judgement is held while judging)."""

    def judgement() -> models.Model:
        return make_judgement()

    def delivery() -> models.Model:
        return WebhookDelivery.objects.create(
            judgement=make_judgement(), event="judgement.finished", url="https://x", payload={}
        )

    def notification() -> models.Model:
        reviewer = User.objects.create_user(f"r{User.objects.count()}")
        return Notification.objects.create(judgement=make_judgement(), user=reviewer)

    return {
        "judgement": (Judgement, judgement, {"move": JudgementStates.claim}),
        "webhook delivery": (WebhookDelivery, delivery, {}),
        "notification": (Notification, notification, {}),
    }[request.param]


def rows(model: type[models.Model]) -> LeaseQuerySet:
    queryset = model._default_manager.all()
    assert isinstance(queryset, LeaseQuerySet)
    return queryset


def test_a_claimed_row_is_skipped_until_its_lease_runs_out(kind):
    model, make, changes = kind
    first, second = make(), make()
    now = timezone.now()
    assert rows(model).claim("w1", 1, order=("pk",), now=now, **changes) == [(first.pk,)]
    assert rows(model).claim("w2", 5, order=("pk",), now=now, **changes) == [(second.pk,)]
    assert rows(model).claim("w3", 5, order=("pk",), now=expiry(now), **changes) == []
    # One lease later (the one formula): both are free again, the dead workers' work
    # taken over by whoever claims next.
    later = expiry(now) + timedelta(microseconds=1)
    taken = rows(model).claim("w3", 5, order=("pk",), now=later, **changes)
    assert taken == [(first.pk,), (second.pk,)]
    assert set(rows(model).values_list("lease_owner", "lease_expires_at")) == {
        ("w3", expiry(later))
    }


def test_only_the_holder_renews_or_releases(kind):
    model, make, changes = kind
    row = make()
    now = timezone.now()
    rows(model).claim("w1", 1, order=("pk",), now=now, **changes)
    later = now + timedelta(seconds=5)
    assert rows(model).renew("w2", later) == 0
    assert rows(model).release("w2") == 0
    assert rows(model).renew("w1", later) == 1
    assert rows(model).get(pk=row.pk).lease_expires_at == expiry(later)
    assert rows(model).release("w1") == 1
    assert rows(model).filter(pk=row.pk, lease_owner="", lease_expires_at=None).exists()
    assert rows(model).renew("w1", later) == 0  # released: nothing left to renew


def test_a_claim_writes_its_changes_and_returns_the_columns_as_they_were(make_judgement):
    judgement = make_judgement()
    claimed = Judgement.objects.claim(
        "w1", 1, order=("pk",), columns=("pk", "status"), move=JudgementStates.claim
    )
    assert claimed == [(judgement.pk, "idle")]
    assert Judgement.objects.get(pk=judgement.pk).status == "judging"
    assert Judgement.objects.claim("w1", 0, order=("pk",)) == []
