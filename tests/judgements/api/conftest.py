"""Fixtures the API tests share."""

import pytest
from django.test import AsyncClient


@pytest.fixture
async def document() -> dict:
    """The API's OpenAPI document, as /api/schema.json serves it."""
    response = await AsyncClient().get("/api/schema.json")
    assert response.status_code == 200
    return response.json()
