"""The provider as MAGI reads it, against the suite's real OpenID Connect provider
(tests/support/identity_provider.py): discovery, the redirect with PKCE, state and nonce,
an unreachable or impostor provider, and the provider's logout."""

from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.test import RequestFactory

from judgements.identity import provider
from tests.support.identity_provider import IdentityProvider
from tests.support.live_site import free_port


@pytest.fixture(scope="module")
def idp():
    server = IdentityProvider().start()
    yield server
    server.stop()


@pytest.fixture
def configured(settings, idp):
    settings.MAGI_OIDC_ISSUER = idp.issuer
    settings.MAGI_OIDC_CLIENT_ID = "magi"
    settings.MAGI_OIDC_CLIENT_SECRET = "secret"
    return settings


def request_with_session(path: str = "/"):
    request = RequestFactory().get(path)
    request.session = SessionStore()
    return request


def test_the_redirect_carries_pkce_state_and_nonce_kept_in_the_session(db, configured, idp):
    request = request_with_session()
    response = provider.begin(request)
    sent = parse_qs(urlsplit(response["Location"]).query)
    assert response["Location"].startswith(f"{idp.issuer}/authorize/")
    assert sent["code_challenge_method"] == ["S256"]
    assert sent["client_id"] == ["magi"] and sent["scope"] == ["openid email profile"]
    kept = request.session[f"_state_magi_{sent['state'][0]}"]["data"]
    assert kept["nonce"] == sent["nonce"][0] and kept["code_verifier"]


def test_an_unreachable_provider_is_said_so(db, configured):
    configured.MAGI_OIDC_ISSUER = f"http://127.0.0.1:{free_port()}/o"
    with pytest.raises(provider.ProviderUnreachable, match="cannot be reached"):
        provider.begin(request_with_session())


def test_a_discovery_document_naming_another_issuer_is_refused(db, configured, idp):
    configured.MAGI_OIDC_ISSUER = idp.issuer.replace("127.0.0.1", "localhost")
    with pytest.raises(provider.SignInRefused, match="MAGI does not trust it"):
        provider.begin(request_with_session())


def test_signing_out_goes_to_the_providers_end_session_endpoint(db, configured, idp):
    request = request_with_session()
    assert provider.end_session_url(request, "http://magi/accounts/login/") is None
    request.session[provider.ID_TOKEN_KEY] = "the.id.token"
    url = provider.end_session_url(request, "http://magi/accounts/login/")
    assert url is not None and url.startswith(f"{idp.issuer}/logout/")
    sent = parse_qs(urlsplit(url).query)
    assert sent["id_token_hint"] == ["the.id.token"]
    assert sent["post_logout_redirect_uri"] == ["http://magi/accounts/login/"]
