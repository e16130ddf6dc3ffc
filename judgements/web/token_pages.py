"""A user's own API tokens: create one (its key shown once, on the answer to the form)
and revoke one, each audited (configuration/people.py). Only a hash of a key is stored
(ApiToken.issue); a revoked token stops working at once and stays listed, so the
judgements it started still name it.
"""

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from judgements.configuration import budget_config, people
from judgements.infrastructure.forms import error_summary
from judgements.models import ApiToken
from judgements.spending import budgets
from judgements.web.signed_in import signed_in_user


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=100,
        label="What it is for",
        help_text="A name to tell your tokens apart, such as “CI deploy gate”.",
    )


@never_cache  # the answer to a create holds the key: no cache may keep it
@login_required
@require_http_methods(["GET", "POST"])
def token_list(request: HttpRequest) -> HttpResponse:
    user = signed_in_user(request)
    form, key, status = TokenForm(), None, 200
    if request.method == "POST":
        form = TokenForm(request.POST)
        if form.is_valid():
            key = people.issue_own_token(user, form.cleaned_data["name"]).key
            form = TokenForm()
        else:
            status = 400
    context = {
        "form": form,
        "key": key,
        "tokens": ApiToken.objects.filter(user=user),
        "budgets": [budgets.state_of(b) for b in budget_config.visible_to(user).order_by("pk")],
        "error_summary": error_summary(form) if status == 400 else [],
    }
    return render(request, "judgements/tokens.html", context, status=status)


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    # Another user's token does not exist, as far as this user can tell.
    user = signed_in_user(request)
    people.revoke_token(user, get_object_or_404(ApiToken, pk=token_id, user=user))
    return redirect("token-list")
