# The OpenID Connect client judgements/identity/provider.py registers and calls
# (authlib/integrations/django_client/, base_client/sync_app.py and sync_openid.py).
# A discovery document, a token and a logout URL are JSON objects: their values are the
# provider's, untyped here as in authlib.

from typing import Any

from django.http import HttpRequest, HttpResponse

class DjangoOAuth2App:
    client_id: str
    server_metadata: dict[str, Any]
    def load_server_metadata(self) -> dict[str, Any]: ...
    def authorize_redirect(
        self, request: HttpRequest, redirect_uri: str | None = None, **kwargs: object
    ) -> HttpResponse: ...
    def authorize_access_token(self, request: HttpRequest, **kwargs: object) -> dict[str, Any]: ...
    def create_logout_url(
        self,
        post_logout_redirect_uri: str | None = None,
        id_token_hint: str | None = None,
        state: str | None = None,
        **kwargs: object,
    ) -> dict[str, str]: ...

class OAuth:
    def __init__(
        self, cache: object = None, fetch_token: object = None, update_token: object = None
    ) -> None: ...
    # Returns the app registered under the name (DjangoOAuth2App for an OAuth 2 client).
    def register(self, name: str, overwrite: bool = False, **kwargs: object) -> Any: ...
