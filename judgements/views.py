from asgiref.sync import async_to_sync
from django.conf import settings
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render, resolve_url
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from judgements import consumers, events, forms, limits, overrides, panel, providers
from judgements.models import Judgement


def visible_judgement(request: HttpRequest, judgement_id: int) -> Judgement:
    judgement = get_object_or_404(
        Judgement.objects.prefetch_related("agents__decisions"), pk=judgement_id
    )
    if not judgement.visible_to(request.user):
        # Another user's judgement does not exist, as far as this user can tell.
        raise Http404("No judgement matches the given query.")
    return judgement


@login_required
@require_http_methods(["GET", "POST"])
def judgement_new(request: HttpRequest) -> HttpResponse:
    refusal = None
    if request.method == "POST" and "refresh_models" in request.POST:
        # Ask the discovering providers now, and show the form again exactly as typed.
        providers.discovery.refresh_all()
        form, formset = forms.bind(initial=forms.typed_case(request.POST))
        status = 200
    elif request.method == "POST":
        form, formset = forms.bind(request.POST)
        not_utf8 = forms.invalid_utf8_fields(request.body) if is_urlencoded(request) else set()
        if forms.is_valid(form, formset, not_utf8):
            try:
                judgement = limits.create_judgement(
                    forms.cleaned_case(form, formset), creator=request.user
                )
            except limits.Refused as exc:
                refusal = exc
            else:
                async_to_sync(events.wake)(judgement.pk)
                return redirect(judgement)
        status = 400 if refusal is None else 429
    else:
        initial = {}
        again = request.GET.get("again", "").strip()
        if again:
            # Only a plain decimal id: str.isdigit() also takes "²", which int() refuses.
            if not again.isascii() or not again.isdecimal():
                raise Http404(f"There is no judgement {again!r} to run again.")
            initial = visible_judgement(request, int(again)).as_case()
        form, formset = forms.bind(initial=initial)
        status = 200
    context = {
        "form": form,
        "formset": formset,
        "models": providers.available_models(),
        "discovering": providers.discovering(),
        "model_problems": providers.discovery.problems(),
        "refusal": refusal,
    }
    response = render(request, "judgements/new.html", context, status=status)
    if refusal is not None:
        response["Retry-After"] = str(refusal.retry_after)
    return response


def is_urlencoded(request: HttpRequest) -> bool:
    return request.content_type == "application/x-www-form-urlencoded"


@login_required
@require_GET
def judgement_detail(request: HttpRequest, judgement_id: int) -> HttpResponse:
    judgement = visible_judgement(request, judgement_id)
    return render_detail(request, judgement, overrides.OverrideForm())


def render_detail(
    request: HttpRequest, judgement: Judgement, override_form, status: int = 200, refusal=""
) -> HttpResponse:
    context = {
        "panel": panel.build(judgement),
        "may_override": overrides.may_override(request.user),
        "override_form": override_form,
        "override_refusal": refusal,
    }
    return render(request, "judgements/detail.html", context, status=status)


@login_required
@require_POST
def judgement_override(request: HttpRequest, judgement_id: int) -> HttpResponse:
    """The live page's override form: a decision and a reason, put in force over the
    panel's verdict (judgements/overrides.py)."""
    judgement = visible_judgement(request, judgement_id)
    if not overrides.may_override(request.user):
        raise PermissionDenied("You may not override judgements.")
    form = overrides.OverrideForm(request.POST)
    if form.is_valid():
        refusal = overrides.apply_form(judgement.pk, request.user, form)
        if refusal is not None:
            judgement = visible_judgement(request, judgement_id)
            return render_detail(request, judgement, form, status=409, refusal=refusal)
        if form.is_valid():  # no field error added by the override's own checks
            return redirect(judgement)
    return render_detail(request, judgement, form, status=400)


@login_required
@require_GET
def judgement_list(request: HttpRequest) -> HttpResponse:
    judgements = Judgement.objects.select_related("creator", "override__by")
    if not request.user.is_staff:
        judgements = judgements.filter(creator=request.user)
    return render(request, "judgements/list.html", {"judgements": judgements[:200]})


@require_GET
async def healthz(request: HttpRequest) -> JsonResponse:
    # Async, so a load balancer's probe never waits behind the process's sync views.
    return JsonResponse({"status": "ok"})


@require_POST
def log_out(request: HttpRequest) -> HttpResponse:
    """Log out, then close the live pages this login session still has open."""
    session_key = request.session.session_key
    logout(request)
    if session_key:
        async_to_sync(consumers.close_session_sockets)(session_key)
    return redirect(resolve_url(settings.LOGOUT_REDIRECT_URL))
