"""Setting a judgement's lease as another worker would have."""

from datetime import timedelta

from asgiref.sync import sync_to_async
from django.utils import timezone

from judgements.models import Judgement, Status
from tests.support.states import bring


@sync_to_async
def set_lease(judgement_id: int, owner: str, *, expires_in: float, started_ago: float = 0):
    now = timezone.now()
    bring(
        Judgement.objects.filter(pk=judgement_id),
        Status.JUDGING,
        lease_owner=owner,
        lease_expires_at=now + timedelta(seconds=expires_in),
        started_at=now - timedelta(seconds=started_ago),
    )
