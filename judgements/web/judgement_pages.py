"""A judgement's own pages: the live page, its exports as JSON, Markdown and its evidence
pack, and hiding it from the history list."""

from typing import TypedDict

from django import forms
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AnonymousUser
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from judgements.audit import evidence
from judgements.models import Judgement
from judgements.models.choices import ReviewRefusal
from judgements.outcome import answers, overrides, reviews
from judgements.web import live_page


def visible_judgement(request: HttpRequest, judgement_id: int) -> Judgement:
    judgement = get_object_or_404(
        Judgement.objects.select_related(*live_page.RELATED).prefetch_related(*live_page.PREFETCH),
        pk=judgement_id,
    )
    user = request.user
    if isinstance(user, AnonymousUser) or not judgement.visible_to(user):
        # Another user's judgement does not exist, as far as this user can tell.
        raise Http404("No judgement matches the given query.")
    return judgement


@login_required
@require_GET
def judgement_detail(request: HttpRequest, judgement_id: int) -> HttpResponse:
    judgement = visible_judgement(request, judgement_id)
    return render_detail(request, judgement)


class ReviewContext(TypedDict):
    """The live page's review part (`review_context`), for judgements/detail.html and
    its _override.html."""

    panel: live_page.PanelView
    may_override: bool
    four_eyes: str
    override_form: forms.Form
    confirm_form: forms.Form
    override_refusal: str


def render_detail(
    request: HttpRequest,
    judgement: Judgement,
    status: int = 200,
    refusal: str = "",
    override_form: forms.Form | None = None,
    confirm_form: forms.Form | None = None,
) -> HttpResponse:
    """The live page; a review form not given is shown empty."""
    context = review_context(request, judgement, refusal, override_form, confirm_form)
    return render(request, "judgements/detail.html", context, status=status)


def review_context(
    request: HttpRequest,
    judgement: Judgement,
    refusal: str = "",
    override_form: forms.Form | None = None,
    confirm_form: forms.Form | None = None,
) -> ReviewContext:
    """What the review part shows: the forms to a reviewer; to the author on a four-eyes
    panel, why they have none and who reviews it instead. A level that escalated is not
    reviewed (a review of it is refused, 409): no forms, and the story's last level named
    instead, where a person reviews it if anyone does (docs/escalation.md)."""
    refused = overrides.refusal(request.user, judgement)
    four_eyes = refused and refused.reason == ReviewRefusal.FOUR_EYES
    escalated = judgement.escalated
    return {
        "panel": live_page.build(judgement),
        "may_override": refused is None and not escalated,
        "four_eyes": refused.message if refused and four_eyes and not escalated else "",
        "override_form": override_form or overrides.OverrideForm(verdict=judgement.verdict),
        "confirm_form": confirm_form or reviews.ConfirmForm(),
        "override_refusal": refusal,
    }


@login_required
@require_POST
def judgement_hide(request: HttpRequest, judgement_id: int) -> HttpResponse:
    """Hide a judgement from the history list, or show it again (`show`); back to where
    the button was."""
    judgement = visible_judgement(request, judgement_id)
    judgement.hide(request.POST.get("show") != "1")
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = judgement.get_absolute_url()
    return redirect(back)


@login_required
@require_GET
def judgement_export(request: HttpRequest, judgement_id: int, kind: str) -> HttpResponse:
    """One judgement as JSON (the API's answer), Markdown (to paste into a ticket) or its
    evidence pack."""
    judgement = visible_judgement(request, judgement_id)
    response: HttpResponse
    if kind == "evidence.json":
        # The evidence pack (docs/evidence.md): `magi verify` checks it offline.
        pack = evidence.pack(Judgement.objects.with_results().get(pk=judgement.pk))
        response = JsonResponse(pack, json_dumps_params={"indent": 2})
    elif kind == "json":
        answer = answers.Judgement.from_record(judgement).as_json()
        response = JsonResponse(answer, json_dumps_params={"indent": 2})
    else:
        context = {"panel": live_page.build(judgement)}
        text = render_to_string("judgements/judgement.md", context, request)
        response = HttpResponse(text, content_type="text/markdown; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="judgement-{judgement.pk}.{kind}"'
    return response
