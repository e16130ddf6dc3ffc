"""Judgements as the API and the MCP tools report them (outcome/answers.py), read in a
fixed number of queries, and only those the reader may see."""

from django.contrib.auth.models import User

from judgements.audit import evidence, receipts
from judgements.models import Judgement, is_id
from judgements.outcome import answers, reviews


def result_of(judgement_id: int) -> answers.Judgement:
    return answers.Judgement.from_record(Judgement.objects.with_results().get(pk=judgement_id))


def find_visible(judgement_id: int, user: User) -> Judgement | None:
    if not is_id(judgement_id):
        return None
    judgement = Judgement.objects.filter(pk=judgement_id).first()
    if judgement is None or not judgement.visible_to(user):
        return None
    return judgement


def visible_result(judgement_id: int, user: User) -> answers.Judgement | None:
    """The judgement's result, or None when the user may not see it (or it does not exist)."""
    return result_of(judgement_id) if find_visible(judgement_id, user) is not None else None


def visible_pack(judgement_id: int, user: User) -> evidence.Pack | None:
    """The judgement's evidence pack (audit/evidence.py), or None when the user may not
    see it (or it does not exist)."""
    if find_visible(judgement_id, user) is None:
        return None
    return evidence.pack(Judgement.objects.with_results().get(pk=judgement_id))


def recent_results(user: User, limit: int = 50) -> list[answers.Judgement]:
    found = list(Judgement.objects.visible_to(user).with_results()[:limit])
    receipts.attach_inclusions(found)
    return [answers.Judgement.from_record(j) for j in found]


def queued_results(user: User, limit: int = 50) -> list[answers.Judgement]:
    """The review queue: contested judgements nobody has reviewed, newest first."""
    found = list(reviews.queue(user).with_results()[:limit])
    receipts.attach_inclusions(found)
    return [answers.Judgement.from_record(j) for j in found]
