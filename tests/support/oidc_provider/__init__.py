"""A real OpenID Connect provider for the sign-in tests: a small Django site around
django-oauth-toolkit's provider (RS256 ID tokens, discovery, JWKS, PKCE, RP-initiated
logout), run in a process of its own by tests/support/identity_provider.py. Its
/control/ endpoints let a test make people and groups, register MAGI as a client, rotate
the signing key, and make the next ID token go wrong in one chosen way."""
