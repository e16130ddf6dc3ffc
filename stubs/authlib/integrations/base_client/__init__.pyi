# authlib (1.x) ships no types: the error judgements/identity/provider.py catches
# (authlib/common/errors.py, authlib/integrations/base_client/errors.py).

class OAuthError(Exception):
    error: str
    description: str | None
    uri: str | None
    def __init__(
        self, error: str | None = None, description: str | None = None, uri: str | None = None
    ) -> None: ...
