"""What every page's navigation needs to know about the signed-in user."""

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from judgements.outcome import overrides


def navigation(request: HttpRequest) -> dict[str, object]:
    """`may_review`: whether the Review queue link shows (staff, the override permission,
    or a reviewer a team's panel names). Lazy: a page that does not ask costs no query."""
    return {"may_review": SimpleLazyObject(lambda: overrides.may_override(request.user))}
