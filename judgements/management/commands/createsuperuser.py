"""Django's `createsuperuser`, unchanged but audited: the user it makes gets the audit row
every user made gets (configuration/people.py), so `manage.py audit verify` does not name
them as added outside MAGI. It overrides Django's own command of the same name (this app
is listed before django.contrib.auth)."""

from django.contrib.auth.management.commands import createsuperuser
from django.contrib.auth.models import User
from django.db.models import Max

from judgements.configuration import people

ACTOR = "manage.py createsuperuser"


class Command(createsuperuser.Command):
    def handle(self, *args: object, **options: object) -> None:
        # Django's prompts run inside: no transaction is held across them. The superuser
        # it makes is the one user above the last before it (its own database write).
        last = User.objects.aggregate(last=Max("pk"))["last"] or 0
        super().handle(*args, **options)
        for made in User.objects.filter(pk__gt=last, is_superuser=True).order_by("pk"):
            people.record_made(made, None, ACTOR)
