"""A logged-in session's cookie, for websocket tests."""

from asgiref.sync import sync_to_async
from django.conf import settings as django_settings
from django.test import Client


@sync_to_async
def session_cookie(user) -> str:
    """The Cookie header of a logged-in session of `user`, as a browser sends it."""
    client = Client()
    client.force_login(user)
    name = django_settings.SESSION_COOKIE_NAME
    return f"{name}={client.cookies[name].value}"
