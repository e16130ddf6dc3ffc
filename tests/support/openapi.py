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
        validator(document, described["content"]["application/json"]["schema"]).validate(body)
    for header, spec in described.get("headers", {}).items():
        if spec.get("required"):
            assert response.has_header(header), f"{method} {path} {status}: no {header}"
        if response.has_header(header):
            Draft202012Validator(spec["schema"]).validate(response[header])
    return body


def body_allowed(document: dict, path: str, method: str, body) -> bool:
    """Whether the document's JSON request schema allows `body`: the API answers 400
    exactly when it does not."""
    request = document["paths"][path][method]["requestBody"]["content"]["application/json"]
    return validator(document, request["schema"]).is_valid(body)


def validator(document: dict, schema: dict) -> Draft202012Validator:
    """`schema` with the document's components, which its $refs point into."""
    return Draft202012Validator({**schema, "components": document["components"]})
