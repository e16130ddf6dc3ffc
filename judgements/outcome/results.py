"""Judgements as the API, the MCP tools and the command line report them
(Judgement.as_result), read in a fixed number of queries, and only those the reader may
see."""

from judgements.models import Judgement, is_id
from judgements.outcome import reviews


def result_of(judgement_id: int) -> dict:
    return Judgement.objects.with_results().get(pk=judgement_id).as_result()


def find_visible(judgement_id: int, user) -> Judgement | None:
    if not is_id(judgement_id):
        return None
    judgement = Judgement.objects.filter(pk=judgement_id).first()
    if judgement is None or not judgement.visible_to(user):
        return None
    return judgement


def visible_result(judgement_id: int, user) -> dict | None:
    """The judgement's result, or None when the user may not see it (or it does not exist)."""
    return result_of(judgement_id) if find_visible(judgement_id, user) is not None else None


def recent_results(user, limit: int = 50) -> list[dict]:
    return [j.as_result() for j in Judgement.objects.visible_to(user).with_results()[:limit]]


def queued_results(user, limit: int = 50) -> list[dict]:
    """The review queue: contested judgements nobody has reviewed, newest first."""
    return [j.as_result() for j in reviews.queue(user).with_results()[:limit]]
