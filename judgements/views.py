from asgiref.sync import async_to_sync
from django.conf import settings
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render, resolve_url
from django.template.loader import render_to_string
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from judgements import (
    api,
    consumers,
    events,
    forms,
    history,
    limits,
    overrides,
    panel,
    providers,
    reviews,
    saved_panels,
    tryout,
)
from judgements.local_llm import BUNDLED_MODEL_NAME
from judgements.models import Judgement, Panel


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
    # The saved panel the agents were filled from (a hidden field carries its id), the
    # page's two panel controls, and what saving a panel did.
    chosen = None
    panel_problem = ""
    choose_form = saved_panels.ChoosePanelForm(user=request.user)
    panel_form = new_panel_form(request)
    saved = None
    if request.method == "POST":
        chosen, panel_problem = chosen_panel(request)
    if request.method == "POST" and "refresh_models" in request.POST:
        # Ask the discovering providers now, and show the form again exactly as typed.
        providers.discovery.refresh_all()
        form, formset = forms.bind(initial=forms.typed_case(request.POST))
        status = 200
    elif request.method == "POST" and "use_panel" in request.POST:
        # Fill the agents from a saved panel; the title and content stay as typed.
        choose_form = saved_panels.ChoosePanelForm(request.POST, user=request.user)
        form = forms.bind(initial=forms.typed_case(request.POST))[0]
        if choose_form.is_valid():
            chosen, panel_problem = choose_form.cleaned_data["start_panel"], ""
            formset = saved_panels.agents_formset(agents=saved_panels.agents_of(chosen))
            choose_form = saved_panels.ChoosePanelForm(user=request.user)
            status = 200
        else:
            formset = forms.bind(initial=forms.typed_case(request.POST))[1]
            status = 400
    elif request.method == "POST" and "save_panel" in request.POST:
        # Save the three agents as typed as a new panel of the user's; keep everything.
        panel_form = new_panel_form(request, request.POST)
        form = forms.bind(initial=forms.typed_case(request.POST))[0]
        formset = saved_panels.agents_formset(request.POST)
        not_utf8 = forms.invalid_utf8_fields(request.body) if is_urlencoded(request) else set()
        if forms.is_valid(panel_form, formset, not_utf8):
            try:
                saved = saved_panels.store(panel_form, formset)
            except saved_panels.PanelError as exc:
                panel_form.add_error("name", exc.errors["name"])
        if saved is not None:
            # The agents on the page are now this panel's: a judgement records it.
            chosen, panel_problem = saved, ""
            panel_form = new_panel_form(request)
        status = 200 if saved is not None else 400
    elif request.method == "POST":
        form, formset = forms.bind(request.POST)
        not_utf8 = forms.invalid_utf8_fields(request.body) if is_urlencoded(request) else set()
        if forms.is_valid(form, formset, not_utf8) and not panel_problem:
            try:
                judgement = limits.create_judgement(
                    {**forms.cleaned_case(form, formset), "panel": chosen}, creator=request.user
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
        start = request.GET.get("panel", "").strip()
        if again:
            # Only a plain decimal id: str.isdigit() also takes "²", which int() refuses.
            if not again.isascii() or not again.isdecimal():
                raise Http404(f"There is no judgement {again!r} to run again.")
            judgement = visible_judgement(request, int(again))
            initial = judgement.as_case()
            if judgement.panel is not None and judgement.panel.visible_to(request.user):
                chosen = judgement.panel
        example = None
        if "example" in request.GET:
            example = tryout.find(request.GET["example"], request.GET.get("case", ""))
            if example is None:
                raise Http404("There is no such example.")
            initial = {"title": example.title, "content": example.content}
            chosen = example.panel
        form, formset = forms.bind(initial=initial)
        if example is not None:
            formset = saved_panels.agents_formset(agents=saved_panels.agents_of(example.panel))
        if start:
            # "Judge with this panel" on the panel list.
            if not saved_panels.is_decimal_id(start):
                raise Http404(f"There is no panel {start!r}.")
            try:
                chosen = saved_panels.resolve(int(start), request.user)
            except saved_panels.PanelError:
                raise Http404(f"There is no panel {start!r}.") from None
            formset = saved_panels.agents_formset(agents=saved_panels.agents_of(chosen))
        status = 200
    available = providers.available_models()
    context = {
        "form": form,
        "formset": formset,
        "models": available,
        "discovering": providers.discovering(),
        "model_problems": providers.discovery.problems(),
        "refusal": refusal,
        "choose_form": choose_form,
        "chosen_panel": chosen,
        "panel_problem": panel_problem,
        "panel_form": panel_form,
        "saved_panel": saved,
        "examples": tryout.offered(),
        "bundled_model": bundled_in(formset, available),
        "error_summary": (
            forms.error_summary(form, choose_form, panel_form, formset=formset)
            if status == 400
            else []
        ),
        # After "Fill in the agents", go on from the content (or Judge once it is there)
        # instead of the top of the page.
        "focus_after_fill": ("judge" if form["content"].value() else "content")
        if chosen is not None and request.method == "POST" and status == 200
        else "",
    }
    if context["focus_after_fill"] == "content":
        form.fields["content"].widget.attrs["autofocus"] = True
    response = render(request, "judgements/new.html", context, status=status)
    if refusal is not None:
        response["Retry-After"] = str(refusal.retry_after)
    return response


def bundled_in(formset, available: list[str]) -> bool:
    """Whether an agent on the form uses the bundled demonstration model (or it is the
    only model there is): the page then says what it is good for."""
    if available == [BUNDLED_MODEL_NAME]:
        return True
    return any(member["model"].value() == BUNDLED_MODEL_NAME for member in formset.forms)


NEW_PANEL_PREFIX = "new_panel"


def new_panel_form(request: HttpRequest, data=None) -> saved_panels.PanelForm:
    return saved_panels.PanelForm(data, prefix=NEW_PANEL_PREFIX, owner=request.user)


def chosen_panel(request: HttpRequest) -> tuple[Panel | None, str]:
    """The saved panel the posted agents were filled from (the hidden "panel" field), and
    why it cannot be recorded if it cannot: a judgement never silently drops it."""
    raw = request.POST.get("panel", "").strip()
    if not raw:
        return None, ""
    try:
        if not saved_panels.is_decimal_id(raw):
            raise saved_panels.PanelError({"panel": ["Not a panel id."]})
        return saved_panels.resolve(int(raw), request.user), ""
    except saved_panels.PanelError:
        return None, (
            "The saved panel these agents were filled from is not there any more (or not "
            "yours to use). The agents below are kept; press Judge again to judge without it."
        )


def is_urlencoded(request: HttpRequest) -> bool:
    return request.content_type == "application/x-www-form-urlencoded"


@login_required
@require_GET
def judgement_detail(request: HttpRequest, judgement_id: int) -> HttpResponse:
    judgement = visible_judgement(request, judgement_id)
    return render_detail(request, judgement)


def render_detail(
    request: HttpRequest,
    judgement: Judgement,
    status: int = 200,
    refusal="",
    override_form=None,
    confirm_form=None,
) -> HttpResponse:
    """The live page; a review form not given is shown empty."""
    context = review_context(request, judgement, refusal, override_form, confirm_form)
    return render(request, "judgements/detail.html", context, status=status)


def review_context(
    request: HttpRequest, judgement: Judgement, refusal="", override_form=None, confirm_form=None
) -> dict:
    return {
        "panel": panel.build(judgement),
        "may_override": overrides.may_override(request.user),
        "override_form": override_form or overrides.OverrideForm(verdict=judgement.verdict),
        "confirm_form": confirm_form or reviews.ConfirmForm(),
        "override_refusal": refusal,
    }


@login_required
@require_GET
def judgement_review_forms(request: HttpRequest, judgement_id: int) -> HttpResponse:
    """The live page's review part (the record of any review, and the confirm and
    override forms for a reviewer), fetched by the page when its judgement ends live: the
    websocket's partials carry no CSRF token, so the forms come from a request."""
    judgement = visible_judgement(request, judgement_id)
    context = review_context(request, judgement)
    return render(request, "judgements/_override.html", context)


def review(request: HttpRequest, judgement_id: int, form_name: str, build, apply, refused: str):
    """A review form posted from the live page (override or confirm): `build(data,
    judgement)` binds it, `apply(judgement_id, user, form)` stores it and returns why it
    was refused (or None; field errors go onto the form). Back to the page when stored,
    else the page again with the form as posted: 409 when refused, 400 for bad input."""
    judgement = visible_judgement(request, judgement_id)
    if not overrides.may_override(request.user):
        raise PermissionDenied(refused)
    form = build(request.POST, judgement)
    refusal = None
    if form.is_valid():
        refusal = apply(judgement.pk, request.user, form)
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
    (judgements/reviews.py)."""

    def build(data, judgement: Judgement) -> reviews.ConfirmForm:
        return reviews.ConfirmForm(data)

    return review(
        request,
        judgement_id,
        "confirm_form",
        build,
        reviews.apply_form,
        "You may not review judgements.",
    )


@login_required
@require_GET
def review_queue(request: HttpRequest) -> HttpResponse:
    if not overrides.may_override(request.user):
        raise PermissionDenied("You may not review judgements.")
    waiting = reviews.queue(request.user).select_related("override", "confirmation")
    return render(request, "judgements/review_queue.html", {"judgements": waiting[:200]})


@login_required
@require_POST
def judgement_override(request: HttpRequest, judgement_id: int) -> HttpResponse:
    """The live page's override form: a decision and a reason, put in force over the
    panel's verdict (judgements/overrides.py)."""

    def build(data, judgement: Judgement) -> overrides.OverrideForm:
        return overrides.OverrideForm(data, verdict=judgement.verdict)

    return review(
        request,
        judgement_id,
        "override_form",
        build,
        overrides.apply_form,
        "You may not override judgements.",
    )


@login_required
@require_GET
def judgement_list(request: HttpRequest) -> HttpResponse:
    form = history.HistoryFilter(request.GET or None, user=request.user)
    return render_list(request, form)


def render_list(request: HttpRequest, form: history.HistoryFilter) -> HttpResponse:
    """The list as the form's valid filters select it; a bad filter (400) is shown next
    to its field and filters nothing."""
    invalid = form.is_bound and not form.is_valid()
    judgements = history.filtered(request.user, form)
    page = Paginator(judgements, history.PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "form": form,
        "judgements": page,
        "query": query.urlencode(),
        "filtering": form.is_bound and not invalid and any(form.cleaned_data.values()),
        "error_summary": forms.error_summary(form) if invalid else [],
    }
    return render(request, "judgements/list.html", context, status=400 if invalid else 200)


@login_required
@require_GET
def judgement_list_csv(request: HttpRequest) -> HttpResponse:
    """The list as the filters select it, every page, as CSV."""
    form = history.HistoryFilter(request.GET or None, user=request.user)
    if form.is_bound and not form.is_valid():
        return render_list(request, form)
    site = request.build_absolute_uri("/").removesuffix("/")
    rows = history.as_csv(history.filtered(request.user, form), site)
    response = HttpResponse(rows, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="judgements.csv"'
    return response


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
    """One judgement as JSON (the API's answer) or Markdown (to paste into a ticket)."""
    judgement = visible_judgement(request, judgement_id)
    if kind == "json":
        response = JsonResponse(judgement.as_result(), json_dumps_params={"indent": 2})
    else:
        context = {"panel": panel.build(judgement)}
        text = render_to_string("judgements/judgement.md", context, request)
        response = HttpResponse(text, content_type="text/markdown; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="judgement-{judgement.pk}.{kind}"'
    return response


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


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Django's handler400. A page form posted over MAGI_MAX_BODY_BYTES ends here, not in
    its view, because the CSRF check reads the body first: say what happened and that the
    browser's Back keeps what was typed, instead of Django's bare "Bad Request" page."""
    too_big = isinstance(exception, RequestDataTooBig)
    if request.path.startswith("/api/"):
        return api.body_too_large() if too_big else api.error(400, "Bad request.")
    context = {"too_big": too_big, "limit": settings.DATA_UPLOAD_MAX_MEMORY_SIZE}
    return render(request, "judgements/bad_request.html", context, status=413 if too_big else 400)
