"""The evidence as a client fetches it: a judgement's pack from the API, and the keys MAGI
publishes, for the tests that check them with the client's own checks (magi_client)."""

from django.test import Client

from judgements.models import ApiToken
from magi_client.receipts import keys_of


def served_pack(judgement_id: int, owner) -> dict:
    """`GET /api/judgements/{id}/evidence` with a token of `owner`'s."""
    token = ApiToken.issue(owner, "tests")[1]
    response = Client().get(
        f"/api/judgements/{judgement_id}/evidence", headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 200, response.content
    return response.json()


def published_keys() -> dict:
    return keys_of(Client().get("/.well-known/magi-keys.json").json())
