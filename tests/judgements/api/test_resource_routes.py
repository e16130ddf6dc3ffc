"""The routes of every kind of configuration, generated from its class
(judgements/api/resource_routes.py): the served document has each one, named and described
as the class says, and a kind registered gets its routes with nothing else written."""

import inspect
from typing import Unpack

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from ninja import Router
from ninja.testing import TestAsyncClient

from judgements.api import resource_routes, resources, schemas
from judgements.api.site import BearerToken, MagiAPI
from judgements.models import ApiToken

pytestmark = [pytest.mark.django_db(transaction=True)]

ACTIONS = {"list": "get", "create": "post", "read": "get", "replace": "put", "delete": "delete"}


def test_every_route_of_every_kind_is_generated_from_its_class(client):
    paths = client.get("/api/schema.json").json()["paths"]
    for resource in resources.registered():
        one = f"{resource.collection}{{{resource.id_name}}}"
        where = dict.fromkeys(("list", "create"), resource.collection)
        where |= dict.fromkeys(("read", "delete"), one + "/")
        where["replace"] = one + resource.replaced_at
        for action, route in resource.routes.items():
            operation = paths[where[action]][ACTIONS[action]]
            assert operation["operationId"] == resource.operation_name(action)
            assert operation["description"] == inspect.cleandoc(route.doc)
            assert operation["tags"] == [resource.tag]


async def test_a_kind_registered_has_its_routes_generated(notes):
    root = await get_user_model().objects.acreate_user("root", password="pw", is_staff=True)
    key = (await sync_to_async(ApiToken.issue)(root, "config"))[1]
    api = MagiAPI(title="notes", version="1", auth=BearerToken(), urls_namespace="notes-test")
    (note,) = [kind for kind in resources.registered() if kind.kind == "note"]
    api.add_router("/", resource_routes.router_for(note))
    document = api.get_openapi_schema(path_prefix="")
    assert document["paths"]["/notes/"]["post"]["operationId"] == "create_note"
    assert document["paths"]["/notes/{note_id}/"]["get"]["description"] == "One note."
    assert set(document["paths"]) == {"/notes/", "/notes/{note_id}/"}
    assert set(document["paths"]["/notes/{note_id}/"]) == {"get"}  # no PUT, no DELETE
    client = TestAsyncClient(api, headers={"Authorization": f"Bearer {key}"})
    made = await client.post("/notes/?dry_run=true", json={"text": "draft"})
    assert made.status_code == 201 and notes == []
    made = await client.post("/notes/", json={"text": "hi"})
    assert (made.status_code, made.json()) == (201, {"id": 1, "text": "hi", "etag": '"note-1"'})
    assert (made["Location"], made["ETag"]) == ("/api/notes/1/", '"note-1"')
    read = await client.get("/notes/1/")
    assert (read.status_code, read["ETag"], read.json()["text"]) == (200, '"note-1"', "hi")
    listed = await client.get("/notes/")
    assert listed.json() == {"notes": [{"id": 1, "text": "hi", "etag": '"note-1"'}]}


def test_a_view_is_given_only_the_arguments_its_sent_is_typed_with(notes):
    (note,) = [kind for kind in resources.registered() if kind.kind == "note"]

    async def one(request, response, **sent: Unpack[resource_routes.Identified]):
        return sent["pk"]

    with pytest.raises(TypeError, match=r"one is typed for \['pk'\]"):
        resource_routes.add(
            Router(), note, "read", "/notes/{note_id}/", "GET", one,
            [resource_routes.identified(note), resources.DRY_RUN], {200: schemas.Error},
        )  # fmt: skip
    assert resource_routes.called_with(one) == {"pk"}
