"""The history list of judgements, with its filters, and its CSV export."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from judgements.infrastructure.forms import error_summary
from judgements.web import history
from judgements.web.signed_in import signed_in_user


@login_required
@require_GET
def judgement_list(request: HttpRequest) -> HttpResponse:
    form = history.HistoryFilter(request.GET or None, user=signed_in_user(request))
    return render_list(request, form)


def render_list(request: HttpRequest, form: history.HistoryFilter) -> HttpResponse:
    """The list as the form's valid filters select it; a bad filter (400) is shown next
    to its field and filters nothing."""
    invalid = form.is_bound and not form.is_valid()
    judgements = history.filtered(signed_in_user(request), form)
    page = Paginator(judgements, history.PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "form": form,
        "judgements": page,
        "query": query.urlencode(),
        "filtering": form.is_bound and not invalid and any(form.cleaned_data.values()),
        "error_summary": error_summary(form) if invalid else [],
    }
    return render(request, "judgements/list.html", context, status=400 if invalid else 200)


@login_required
@require_GET
def judgement_list_csv(request: HttpRequest) -> HttpResponse:
    """The list as the filters select it, every page, as CSV."""
    form = history.HistoryFilter(request.GET or None, user=signed_in_user(request))
    if form.is_bound and not form.is_valid():
        return render_list(request, form)
    site = request.build_absolute_uri("/").removesuffix("/")
    rows = history.as_csv(history.filtered(signed_in_user(request), form), site)
    response = HttpResponse(rows, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="judgements.csv"'
    return response
