"""Slack's pages: a team's Slack connection (set, tested, removed; its secrets write-only),
the interactivity endpoint Slack posts clicks to, and the page where a Slack user links
their MAGI account (docs/slack.md)."""

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from judgements.configuration import slack_config
from judgements.core.errors import InvalidInput, NotFound
from judgements.infrastructure.forms import error_summary
from judgements.models import Team
from judgements.outcome import slack_actions
from judgements.web.signed_in import signed_in_user


def secret_field(what: str) -> forms.CharField:
    """A secret: typed in, never rendered back (the page shows only that one is set)."""
    return forms.CharField(
        required=False,
        max_length=255,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text=f"{what} Never shown again; leave it empty to keep the one set.",
    )


class SlackForm(forms.Form):
    channel = forms.CharField(
        required=False,
        max_length=40,
        help_text="The channel's ID (in Slack: the channel's details, at the bottom), such as "
        "C0123ABCD. Invite the app there (/invite @MAGI). Empty with direct messages.",
    )
    direct_messages = forms.BooleanField(
        required=False,
        label="Direct messages to each reviewer instead of a channel",
    )
    bot_token = secret_field("The app's Bot User OAuth Token (xoxb-…).")
    signing_secret = secret_field("The app's Signing Secret (Basic Information).")


def team_of(request: HttpRequest, team_id: int) -> Team:
    """The team, for staff and its members; 404 for anyone else (as for teams)."""
    try:
        return slack_config.team_for(signed_in_user(request), team_id)
    except NotFound:
        raise Http404(f"No team {team_id}.") from None


def render_page(
    request: HttpRequest,
    team: Team,
    form: SlackForm | None = None,
    status: int = 200,
    report: slack_config.TestReport | None = None,
) -> HttpResponse:
    connection = slack_config.connection_of(team)
    if form is None:
        initial = {}
        if connection is not None:
            initial = {"channel": connection.channel, "direct_messages": connection.direct_messages}
        form = SlackForm(initial=initial)
    context = {
        "team": team,
        "connection": connection,
        "form": form,
        "report": report,
        "interactivity_url": slack_config.interactivity_url(),
        "manifest": slack_config.manifest_yaml(team),
        "error_summary": error_summary(form) if status == 400 else [],
    }
    return render(request, "judgements/team_slack.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def team_slack(request: HttpRequest, team_id: int) -> HttpResponse:
    """The team's Slack connection: where held verdicts go, and the app's secrets."""
    team = team_of(request, team_id)
    if request.method == "GET":
        return render_page(request, team)
    form = SlackForm(request.POST)
    if form.is_valid():
        fields: slack_config.SlackFields = {
            "channel": form.cleaned_data["channel"].strip(),
            "direct_messages": form.cleaned_data["direct_messages"],
            "bot_token": form.cleaned_data["bot_token"].strip(),
            "signing_secret": form.cleaned_data["signing_secret"].strip(),
        }
        try:
            slack_config.save(signed_in_user(request), team, fields)
            return redirect("team-slack", team_id=team.pk)
        except InvalidInput as exc:
            for name, messages in exc.errors.items():
                for message in messages:
                    form.add_error(name, message)
    return render_page(request, team, form, 400)


@login_required
@require_POST
def team_slack_test(request: HttpRequest, team_id: int) -> HttpResponse:
    """Send the test message and show what Slack said."""
    team = team_of(request, team_id)
    return render_page(request, team, report=slack_config.send_test(team))


@login_required
@require_POST
def team_slack_remove(request: HttpRequest, team_id: int) -> HttpResponse:
    team = team_of(request, team_id)
    slack_config.remove(signed_in_user(request), team)
    return redirect("team-slack", team_id=team.pk)


@csrf_exempt
@require_POST
def slack_interactivity(request: HttpRequest) -> HttpResponse:
    """Slack's Interactivity Request URL: signed by Slack, not by a browser's session (so
    no CSRF token); slack_actions checks the signature before reading anything."""
    reply = slack_actions.handle(
        request.body,
        request.headers.get("X-Slack-Request-Timestamp"),
        request.headers.get("X-Slack-Signature"),
    )
    if not reply.body:
        return HttpResponse(status=reply.status)
    return JsonResponse(reply.body, status=reply.status)


@login_required
@require_http_methods(["GET", "POST"])
def slack_link(request: HttpRequest) -> HttpResponse:
    """A Slack user MAGI did not know says who they are: the link Slack's answer gave
    them, opened signed in."""
    user = signed_in_user(request)
    token = request.GET.get("token", "")
    found = slack_actions.linked(token)
    context: dict[str, object] = {"found": found, "token": token, "done": False}
    if found is None:
        return render(request, "judgements/slack_link.html", context, status=400)
    if request.method == "POST":
        slack_actions.link(user, *found)
        context["done"] = True
    return render(request, "judgements/slack_link.html", context)
