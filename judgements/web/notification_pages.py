"""A person's own notifications: on or off, and one email per waiting verdict or a digest
(judgements/outcome/notifications.py sends them)."""

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from judgements.infrastructure.forms import error_summary
from judgements.models import NotificationChoice
from judgements.outcome import notifications
from judgements.web.signed_in import signed_in_user

DIGEST_MAX_MINUTES = 7 * 24 * 60


class NotificationForm(forms.ModelForm[NotificationChoice]):
    class Meta:
        model = NotificationChoice
        fields = ["enabled", "digest_minutes"]
        labels = {
            "enabled": "Email me when a verdict waits for my review",
            "digest_minutes": "Digest every (minutes)",
        }
        help_texts = {
            "digest_minutes": "0: an email per verdict as it comes; more: at most one email "
            f"every that many minutes, listing all of them (up to {DIGEST_MAX_MINUTES}).",
        }

    def clean_digest_minutes(self) -> int:
        minutes: int = self.cleaned_data["digest_minutes"]
        if minutes > DIGEST_MAX_MINUTES:
            raise forms.ValidationError(f"Must be at most {DIGEST_MAX_MINUTES} (a week).")
        return minutes


@login_required
@require_http_methods(["GET", "POST"])
def notification_settings(request: HttpRequest) -> HttpResponse:
    user = signed_in_user(request)
    choice = notifications.choice_of(user)
    form, status = NotificationForm(instance=choice), 200
    if request.method == "POST":
        form = NotificationForm(request.POST, instance=choice)
        if form.is_valid():
            form.save()
            return redirect("notification-settings")
        status = 400
    context = {
        "form": form,
        # Where each of their teams connects its Slack (docs/slack.md).
        "teams": user.teams.select_related("slack").order_by("name"),
        "has_email": bool(user.email),
        "error_summary": error_summary(form) if status == 400 else [],
    }
    return render(request, "judgements/notifications.html", context, status=status)
