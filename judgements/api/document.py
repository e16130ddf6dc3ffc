"""What /api/schema.json holds beyond what ninja writes from the endpoints: the answer
every operation can give on an unexpected failure (500, JSON, logged), what a line of a
suite's JSONL holds (SuiteCaseLine), and the webhook
MAGI sends to a case's callback_url (OpenAPI 3.1 `webhooks`), its body described by the
same pydantic model as GET /api/judgements/{id}/ (api/schemas.py WebhookEvent)."""

from ninja.openapi.schema import OpenAPISchema

from judgements.api.schemas import WebhookEvent
from judgements.evaluations.suite_schema import SuiteCaseLine

REF = "#/components/schemas/{model}"


def completed(document: OpenAPISchema) -> OpenAPISchema:
    for operation in (op for path in document.get("paths", {}).values() for op in path.values()):
        operation["responses"].setdefault("500", FAILED)
    return with_webhooks(document)


FAILED = {
    "description": "An unexpected failure: logged with its traceback, which is never sent.",
    "content": {"application/json": {"schema": {"$ref": REF.format(model="Error")}}},
}


def with_webhooks(document: OpenAPISchema) -> OpenAPISchema:
    components = document.setdefault("components", {}).setdefault("schemas", {})
    # What each line of a suite's JSONL body holds (POST /api/suites/ names it).
    for name, model in (("WebhookEvent", WebhookEvent), ("SuiteCaseLine", SuiteCaseLine)):
        schema = model.model_json_schema(ref_template=REF)
        components.update(schema.pop("$defs", {}))
        components[name] = schema
    document["webhooks"] = {"judgementEvent": {"post": WEBHOOK}}
    return document


WEBHOOK = {
    "summary": "A judgement ended (judgement.finished: approved, rejected or held; "
    "judgement.failed: error) or was reviewed (judgement.overridden, judgement.confirmed).",
    "description": (
        "Sent to the case's callback_url, retried with exponential backoff until a 2xx "
        "answer or MAGI_WEBHOOK_MAX_ATTEMPTS; redirects are not followed. Signed per "
        'Standard Webhooks: webhook-signature is "v1," + base64(HMAC-SHA256(key, '
        '"{webhook-id}.{webhook-timestamp}.{body}")), the key being the base64-decoded part '
        "of the whsec_ secret. The webhook-id stays the same across retries."
    ),
    "security": [],
    "parameters": [
        {"name": "webhook-id", "in": "header", "required": True, "schema": {"type": "string"}},
        {
            "name": "webhook-timestamp",
            "in": "header",
            "required": True,
            "description": "Unix seconds when this attempt was signed.",
            "schema": {"type": "string", "pattern": "^[0-9]+$"},
        },
        {
            "name": "webhook-signature",
            "in": "header",
            "required": True,
            "schema": {"type": "string", "pattern": "^v1,"},
        },
    ],
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": REF.format(model="WebhookEvent")}}},
    },
    "responses": {"200": {"description": "Any 2xx: delivered; anything else is retried."}},
}
