"""Loaded as a pytest plugin (see pyproject) before Django's settings are read, so the
suite runs on a fresh machine with no environment at all."""

import os

os.environ.setdefault("SECRET_KEY", "magi-test-secret-key-not-for-production")
# Tests configure their own providers; the developer's real keys must not leak in.
for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "REDIS_URL", "DATABASE_URL", "MAGI_MODELS"):
    os.environ.pop(name, None)
