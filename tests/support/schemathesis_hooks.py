"""Loaded by schemathesis (SCHEMATHESIS_HOOKS) in the API contract test: a suite's body is
JSONL text, sent as the text it is (schemathesis knows no JSONL serializer of its own)."""

import schemathesis

schemathesis.serializer.alias("application/jsonl", "text/plain")
