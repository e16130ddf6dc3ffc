"""The object the app reads MAGI's own settings through: MAGI_LEASE_SECONDS read through it
is a float to the type checker (judgements/core/settings_read.py declares every setting's
type) and, at run time, whatever django.conf.settings holds at the moment of the read, so
`override_settings` and pytest-django's `settings` apply. It lives in models/, the lowest
area with Django, because the models and the migrations read settings too."""

from typing import cast

from django.conf import settings

from judgements.core.settings_read import MagiSettingsRead

# Django's lazy settings object itself, typed as what it holds: each read looks the
# setting up then, so an override in force is what the app reads.
magi_settings = cast(MagiSettingsRead, settings)
