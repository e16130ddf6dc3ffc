"""What the test provider says about a person, and the one thing a test asked it to get
wrong in the next ID token (set through /control/mischief)."""

import base64
import json
import time
from typing import Any, ClassVar

from oauth2_provider.oauth2_validators import OAuth2Validator

# Groups whose name starts with this are the provider's own bookkeeping, not claims.
VERIFIED_GROUP = "_email_verified"

# The next ID token's fault: tampered, audience, expired, nonce, issuer; or "".
MISCHIEF: dict[str, str] = {"kind": ""}


class Claims(OAuth2Validator):
    oidc_claim_scope: ClassVar[dict[str, str]] = {
        **OAuth2Validator.oidc_claim_scope,
        "groups": "profile",
    }

    def get_additional_claims(self, request: Any) -> dict[str, Any]:
        user = request.user
        groups = list(user.groups.values_list("name", flat=True))
        return {
            "email": user.email,
            "email_verified": VERIFIED_GROUP in groups,
            "name": f"{user.first_name} {user.last_name}".strip(),
            "groups": sorted(group for group in groups if not group.startswith("_")),
        }

    def get_id_token_dictionary(self, token: Any, token_handler: Any, request: Any) -> Any:
        """The claims, with the fault a test asked for (they override oauthlib's own)."""
        claims, expiration_time = super().get_id_token_dictionary(token, token_handler, request)
        kind = MISCHIEF["kind"]
        if kind == "expired":
            claims["exp"] = int(time.time()) - 3600
        elif kind == "issuer":
            claims["iss"] = "https://issuer.example.net"
        elif kind == "audience":
            claims["aud"] = "another-application"
        elif kind == "nonce":
            claims["nonce"] = "not-the-nonce-magi-sent"
        return claims, expiration_time

    def finalize_id_token(self, id_token: Any, token: Any, token_handler: Any, request: Any) -> str:
        signed = super().finalize_id_token(id_token, token, token_handler, request)
        kind, MISCHIEF["kind"] = MISCHIEF["kind"], ""
        return tamper(signed) if kind == "tampered" else signed


def tamper(signed: str) -> str:
    """The same signature over a payload that now names someone else's email."""
    header, payload, signature = signed.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["email"] = "someone.else@example.com"
    changed = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{header}.{changed}.{signature}"
