"""Checking a real answer against the served OpenAPI document."""

from jsonschema import Draft202012Validator


def check(document: dict, path: str, method: str, response) -> dict:
    """Validate a real answer against the document's schema for its status; return it."""
    operation = document["paths"][path][method]
    status = str(response.status_code)
    assert status in operation["responses"], f"{method} {path}: {status} is not described"
    described = operation["responses"][status]
    body = response.json()
    if "content" in described:
        schema = {
            **described["content"]["application/json"]["schema"],
            "components": document["components"],
        }
        Draft202012Validator(schema).validate(body)
    for header, spec in described.get("headers", {}).items():
        if spec.get("required"):
            assert response.has_header(header), f"{method} {path} {status}: no {header}"
        if response.has_header(header):
            Draft202012Validator(spec["schema"]).validate(response[header])
    return body


def body_allowed(document: dict, path: str, method: str, body) -> bool:
    """Whether the document's JSON request schema allows `body`: the API answers 400
    exactly when it does not."""
    schema = document["paths"][path][method]["requestBody"]["content"]["application/json"]
    validator = Draft202012Validator({**schema["schema"], "components": document["components"]})
    return validator.is_valid(body)
