"""The API and /healthz skip the page middlewares under ASGI, keeping the security
headers (judgements/web/fast_lane.py). AsyncClient runs Django's async handler, as daphne
does; the sync Client takes the usual way through every middleware."""

import pytest
from django.test import AsyncClient, Client

pytestmark = pytest.mark.django_db(transaction=True)


async def test_it_answers_the_api_without_the_page_middlewares():
    response = await AsyncClient().get("/api/judgements/")
    assert response.status_code == 401
    # XFrameOptionsMiddleware and SessionMiddleware would have left these.
    assert "X-Frame-Options" not in response.headers
    assert "Vary" not in response.headers


async def test_it_keeps_the_security_headers_and_the_policy_on_the_fast_lane():
    response = await AsyncClient().get("/healthz")
    assert response.status_code == 200
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert response.headers["Content-Security-Policy"].startswith("default-src 'self'")


async def test_it_redirects_the_api_to_https_when_served_over_https(settings):
    settings.SECURE_SSL_REDIRECT = True
    response = await AsyncClient().get("/api/judgements/")
    assert response.status_code == 301
    assert response.headers["Location"] == "https://testserver/api/judgements/"


async def test_it_sends_pages_through_every_middleware():
    response = await AsyncClient().get("/accounts/login/")
    assert response.status_code == 200
    assert response.headers["X-Frame-Options"] == "DENY"


def test_it_leaves_sync_requests_on_the_usual_way():
    response = Client().get("/healthz")
    assert response.headers["X-Frame-Options"] == "DENY"
