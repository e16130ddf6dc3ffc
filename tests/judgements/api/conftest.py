"""Fixtures the API tests share."""

import pytest
from django.test import AsyncClient

from judgements.api import resources
from tests.support import throwaway_kind


@pytest.fixture
async def document() -> dict:
    """The API's OpenAPI document, as /api/schema.json serves it."""
    response = await AsyncClient().get("/api/schema.json")
    assert response.status_code == 200
    return response.json()


@pytest.fixture
def notes():
    """A kind of configuration registered for one test (tests/support/throwaway_kind.py):
    the notes it keeps."""
    resources.register(throwaway_kind.Notes)
    yield throwaway_kind.Notes.kept
    resources.unregister("note")
    throwaway_kind.Notes.kept.clear()
