"""The identity provider, spoken to through Authlib's Django client: the authorization
code flow with PKCE (S256), state and nonce kept in MAGI's session, the ID token's
signature checked against the keys named by the provider's discovery document (fetched
again when a token names a key id MAGI has not seen), and its issuer, audience, expiry and
nonce checked. What goes wrong becomes one of two exceptions whose message is the page's."""

import logging
from functools import lru_cache

import requests
from authlib.integrations.base_client import OAuthError
from authlib.integrations.django_client import DjangoOAuth2App, OAuth
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from joserfc.errors import (
    BadSignatureError,
    ClaimError,
    DecodeError,
    ExpiredTokenError,
    InvalidKeyIdError,
    JoseError,
)

from judgements.core.json_values import JsonObject
from judgements.models.magi_settings import magi_settings

log = logging.getLogger(__name__)

# Clocks differ: an ID token a few seconds from expiry when it left the provider is fine.
LEEWAY_SECONDS = 30
# Where MAGI keeps the last ID token, for the provider's logout (id_token_hint).
ID_TOKEN_KEY = "oidc_id_token"
DISCOVERY_PATH = "/.well-known/openid-configuration"


class ProviderUnreachable(Exception):
    """The provider's discovery document, keys or token endpoint did not answer."""


class SignInRefused(Exception):
    """A sign-in MAGI will not accept; the message says why, for the person."""


def enabled() -> bool:
    return bool(magi_settings.MAGI_OIDC_ISSUER)


def issuer() -> str:
    return str(magi_settings.MAGI_OIDC_ISSUER).rstrip("/")


def client() -> DjangoOAuth2App:
    """The one client of this configuration: it keeps the discovery document and the
    provider's keys between sign-ins."""
    return configured_client(
        issuer(),
        magi_settings.MAGI_OIDC_CLIENT_ID,
        magi_settings.MAGI_OIDC_CLIENT_SECRET,
        " ".join(magi_settings.MAGI_OIDC_SCOPES),
        float(magi_settings.MAGI_OIDC_TIMEOUT),
    )


@lru_cache(maxsize=4)
def configured_client(
    issuer_url: str, client_id: str, secret: str, scope: str, timeout: float
) -> DjangoOAuth2App:
    oauth = OAuth()
    app: DjangoOAuth2App = oauth.register(
        "magi",
        client_id=client_id,
        client_secret=secret,
        server_metadata_url=issuer_url + DISCOVERY_PATH,
        client_kwargs={"scope": scope, "code_challenge_method": "S256", "default_timeout": timeout},
    )
    return app


def discover(app: DjangoOAuth2App) -> JsonObject:
    """Read the discovery document again (a sign-in is rare; a stale endpoint is worse),
    keeping the keys already fetched. ProviderUnreachable when it does not answer."""
    app.server_metadata.pop("_loaded_at", None)
    try:
        metadata: JsonObject = app.load_server_metadata()
    except (requests.RequestException, ValueError) as exc:
        log.warning("OpenID Connect provider %s unreachable: %s", issuer(), exc)
        raise ProviderUnreachable(
            f"The sign-in provider at {issuer()} cannot be reached just now. Try again in a "
            "few minutes; if it stays down, tell your administrator."
        ) from None
    # OpenID Connect Discovery 1.0, section 4.3: the document must name the issuer MAGI
    # was configured with, or its keys are not that issuer's.
    if str(metadata.get("issuer", "")).rstrip("/") != issuer():
        raise SignInRefused(
            f"The provider's discovery document names the issuer {metadata.get('issuer')!r}, "
            f"not {issuer()!r}: MAGI does not trust it."
        )
    return metadata


def begin(request: HttpRequest) -> HttpResponse:
    """The redirect to the provider's authorization endpoint; state, nonce and the PKCE
    verifier stay in MAGI's session."""
    app = client()
    discover(app)
    redirect_uri = request.build_absolute_uri(reverse("oidc-callback"))
    redirect: HttpResponse = app.authorize_redirect(request, redirect_uri)
    return redirect


def finish(request: HttpRequest) -> tuple[JsonObject, str]:
    """The checked claims of the ID token the provider's callback leads to, and the token
    itself (for the provider's logout). The state is used up whatever happens, so a
    callback URL works once."""
    app = client()
    try:
        token = app.authorize_access_token(
            request,
            claims_options={
                "iss": {"essential": True, "values": [issuer(), issuer() + "/"]},
                "sub": {"essential": True},
            },
            leeway=LEEWAY_SECONDS,
        )
    except (requests.RequestException, ValueError) as exc:
        log.warning("OpenID Connect token request to %s failed: %s", issuer(), exc)
        raise ProviderUnreachable(
            f"The sign-in provider at {issuer()} cannot be reached just now. Try again."
        ) from None
    except OAuthError as exc:
        raise SignInRefused(oauth_refusal(exc)) from None
    except JoseError as exc:
        log.warning("OpenID Connect ID token refused: %s", exc)
        raise SignInRefused(token_refusal(exc)) from None
    claims = token.get("userinfo")
    if not claims:
        raise SignInRefused("The provider answered without an ID token.")
    return dict(claims), str(token["id_token"])


def oauth_refusal(exc: OAuthError) -> str:
    if exc.error == "mismatching_state":
        return (
            "This sign-in link was already used, or was started in another browser or "
            "session. Start again from the sign-in page."
        )
    return (
        f"The provider refused the sign-in ({exc.error}: {exc.description or 'no reason given'})."
    )


def token_refusal(exc: JoseError) -> str:
    """Why the ID token was refused, in words a person (and their administrator) can act on."""
    if isinstance(exc, (BadSignatureError, DecodeError)):
        return "The ID token failed its signature check: it was not signed by the provider."
    if isinstance(exc, InvalidKeyIdError):
        return "The ID token is signed with a key the provider does not publish."
    if isinstance(exc, ExpiredTokenError):
        return "The ID token has expired. Sign in again."
    if isinstance(exc, ClaimError):
        reasons = {
            "iss": "The ID token comes from an issuer MAGI does not trust.",
            "aud": "The ID token was issued for another application, not MAGI.",
            "azp": "The ID token was issued for another application, not MAGI.",
            "nonce": "The ID token does not belong to this sign-in (its nonce differs).",
        }
        return reasons.get(exc.claim, f"The ID token's {exc.claim!r} claim is not valid.")
    return f"The ID token could not be read ({exc.error})."


def end_session_url(request: HttpRequest, return_to: str) -> str | None:
    """Where the browser goes to sign out at the provider too (RP-initiated logout), or
    None: not signed in through the provider, or the provider offers no logout."""
    id_token = request.session.get(ID_TOKEN_KEY)
    if not enabled() or not id_token:
        return None
    app = client()
    try:
        metadata = app.load_server_metadata()
        if not metadata.get("end_session_endpoint"):
            return None
        created = app.create_logout_url(
            post_logout_redirect_uri=return_to,
            id_token_hint=id_token,
            client_id=app.client_id,
        )
    except (requests.RequestException, ValueError, RuntimeError) as exc:
        log.warning("OpenID Connect logout at %s skipped: %s", issuer(), exc)
        return None
    return str(created["url"])
