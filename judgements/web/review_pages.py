"""A reviewer's pages: the queue of contested or held verdicts, and the live page's confirm and
override forms."""

from collections.abc import Callable
from typing import TypeVar

from django import forms
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from judgements.models import Judgement
from judgements.outcome import overrides, reviews
from judgements.web.judgement_pages import render_detail, review_context, visible_judgement
from judgements.web.signed_in import signed_in_user

# A review form: the confirm form or the override form.
ReviewForm = TypeVar("ReviewForm", bound=forms.Form)


@login_required
@require_GET
def judgement_review_forms(request: HttpRequest, judgement_id: int) -> HttpResponse:
    """The live page's review part (the record of any review, and the confirm and
    override forms for a reviewer), fetched by the page when its judgement ends live: the
    websocket's partials carry no CSRF token, so the forms come from a request."""
    judgement = visible_judgement(request, judgement_id)
    context = review_context(request, judgement)
    return render(request, "judgements/_override.html", context)


def review(
    request: HttpRequest,
    judgement_id: int,
    form_name: str,
    build: Callable[[QueryDict, Judgement], ReviewForm],
    apply: Callable[[int, User, ReviewForm], str | None],
) -> HttpResponse:
    """A review form posted from the live page (override or confirm): `build(data,
    judgement)` binds it, `apply(judgement_id, user, form)` stores it and returns why it
    was refused (or None; field errors go onto the form). Back to the page when stored,
    else the page again with the form as posted: 403 saying why the user may not review
    it (four eyes names who else may), 409 when refused, 400 for bad input."""
    judgement = visible_judgement(request, judgement_id)
    refused = overrides.refusal(request.user, judgement)
    if refused is not None:
        return render_detail(request, judgement, 403, refused.message)
    form = build(request.POST, judgement)
    refusal = None
    if form.is_valid():
        refusal = apply(judgement.pk, signed_in_user(request), form)
        if refusal is None and form.is_valid():  # no field error added by its own checks
            return redirect(judgement)
        if refusal is not None:
            judgement = visible_judgement(request, judgement_id)
    status = 400 if refusal is None else 409
    return render_detail(request, judgement, status, refusal or "", **{form_name: form})


@login_required
@require_POST
def judgement_confirm(request: HttpRequest, judgement_id: int) -> HttpResponse:
    """The live page's confirm form: a reviewer keeps the panel's verdict, with a reason
    (judgements/outcome/reviews.py)."""

    def build(data: QueryDict, judgement: Judgement) -> reviews.ConfirmForm:
        return reviews.ConfirmForm(data)

    return review(
        request,
        judgement_id,
        "confirm_form",
        build,
        reviews.apply_form,
    )


@login_required
@require_GET
def review_queue(request: HttpRequest) -> HttpResponse:
    if not overrides.may_override(request.user):
        raise PermissionDenied("You may not review judgements.")
    waiting = reviews.queue(signed_in_user(request)).select_related("override", "confirmation")
    return render(request, "judgements/review_queue.html", {"judgements": waiting[:200]})


@login_required
@require_POST
def judgement_override(request: HttpRequest, judgement_id: int) -> HttpResponse:
    """The live page's override form: a decision and a reason, put in force over the
    panel's verdict (judgements/outcome/overrides.py)."""

    def build(data: QueryDict, judgement: Judgement) -> overrides.OverrideForm:
        return overrides.OverrideForm(data, verdict=judgement.verdict)

    return review(
        request,
        judgement_id,
        "override_form",
        build,
        overrides.apply_form,
    )
