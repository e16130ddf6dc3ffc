from asgiref.sync import async_to_sync
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.middleware import HtmxDetails

from judgements import engine, forms, llm, panel
from judgements.models import Judgement


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


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
def judgement_new(request: HtmxHttpRequest) -> HttpResponse:
    if request.method == "POST":
        form, formset = forms.bind(request.POST)
        if forms.is_valid(form, formset):
            judgement = Judgement.create_with_agents(
                forms.cleaned_case(form, formset), creator=request.user
            )
            async_to_sync(engine.wake)(judgement.pk)
            return redirect(judgement)
        status = 400
    else:
        initial = {}
        again = request.GET.get("again", "").strip()
        if again.isdigit():
            initial = visible_judgement(request, int(again)).as_case()
        form, formset = forms.bind(initial=initial)
        status = 200
    context = {"form": form, "formset": formset, "models": llm.available_models()}
    return render(request, "judgements/new.html", context, status=status)


@login_required
@require_GET
def judgement_detail(request: HtmxHttpRequest, judgement_id: int) -> HttpResponse:
    judgement = visible_judgement(request, judgement_id)
    return render(request, "judgements/detail.html", {"panel": panel.build(judgement)})


@login_required
@require_GET
def judgement_list(request: HtmxHttpRequest) -> HttpResponse:
    judgements = Judgement.objects.select_related("creator")
    if not request.user.is_staff:
        judgements = judgements.filter(creator=request.user)
    return render(request, "judgements/list.html", {"judgements": judgements[:200]})


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})
