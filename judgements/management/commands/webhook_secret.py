from typing import TypedDict, Unpack

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from judgements.models import WebhookSecret


class WebhookSecretOptions(TypedDict):
    """What add_arguments parses."""

    username: str
    rotate: bool


class Command(BaseCommand):
    help = (
        "Create a user's webhook signing secret (whsec_…), shown once; --rotate replaces it "
        "(deliveries not yet sent are signed with the new one)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--rotate", action="store_true", help="replace the existing secret")

    def handle(self, *args: object, **options: Unpack[WebhookSecretOptions]) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"no user called {options['username']!r}", returncode=2)
        existing = WebhookSecret.objects.filter(user=user).first()
        if existing is not None and not options["rotate"]:
            created = existing.created_at.strftime("%Y-%m-%d %H:%M")
            raise CommandError(
                f"{user} already has a webhook secret (created {created} UTC); it is shown "
                "only once. Use --rotate to replace it.",
                returncode=2,
            )
        secret = WebhookSecret.issue(user)
        verb = "rotated" if existing is not None else "created"
        self.stderr.write(f"webhook secret {verb} for {user}; keep it secret:")
        self.stdout.write(secret)
