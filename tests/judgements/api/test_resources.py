"""The kinds of configuration, registered once (judgements/api/resources.py): the batch's
table of operations is generated from the registry, and a kind registered is one a batch
takes (issue 49's design step, as a check is one class)."""

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model

from judgements.api import batch_endpoints, kinds, resources
from judgements.models import ApiToken
from tests.support.api_client import TokenClient

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fake_llm")]

JSON = "application/json"


def test_the_batch_takes_every_method_of_every_batched_kind_and_nothing_else():
    table = {(op.method, op.pattern.pattern) for op in batch_endpoints.operations()}
    assert table == {
        (method, pattern.pattern)
        for resource in resources.registered()
        if resource.versioned
        for method, pattern in resource.paths().items()
    }
    assert ("PUT", r"/api/suites/(\d+)\.jsonl") in table
    assert ("DELETE", r"/api/panels/(\d+)/") in table
    # A token's key is shown once, and `magi apply` makes no users: not in a batch.
    assert not any("/api/tokens/" in pattern or "/api/users/" in pattern for _, pattern in table)
    with pytest.raises(ValueError, match="registered already"):
        resources.register(kinds.Panels)


async def test_a_kind_registered_is_one_a_batch_takes(notes):
    root = await get_user_model().objects.acreate_user("root", password="pw", is_staff=True)
    key = (await sync_to_async(ApiToken.issue)(root, "config"))[1]
    staff = TokenClient(f"Bearer {key}")
    sent = {"operations": [{"method": "POST", "path": "/api/notes/", "body": {"text": "hi"}}]}
    response = await staff.post("/api/batch/", sent, JSON)
    assert response.status_code == 200, response.json()
    (result,) = response.json()["results"]
    assert result == {"status": 201, "body": {"id": 1, "text": "hi", "etag": '"note-1"'},
                      "etag": '"note-1"'}  # fmt: skip
    assert notes == ["hi"]
    refused = {"operations": [{"method": "POST", "path": "/api/notes/", "body": {"txt": 1}}]}
    response = await staff.post("/api/batch/", refused, JSON)
    assert response.status_code == 422
    assert "operations[0].body.txt" in response.json()["errors"]
