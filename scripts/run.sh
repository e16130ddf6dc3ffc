#!/usr/bin/env bash
# Runs MAGI on the embedded default: SQLite, the in-memory channel layer and the engine
# inside the one web process.
set -euo pipefail
BIN=${1:-.venv/bin}
HOST=${2:-127.0.0.1}
PORT=${3:-8000}
cd "$(dirname "$0")/.."
mkdir -p var
if [ -z "${SECRET_KEY:-}" ]; then
  # A key of this installation's own, made once and kept out of git.
  [ -s var/secret-key ] || "$BIN/python" -c "import secrets; print(secrets.token_urlsafe(50))" > var/secret-key
  chmod 600 var/secret-key
  SECRET_KEY=$(cat var/secret-key)
  export SECRET_KEY
fi
"$BIN/python" manage.py migrate --no-input -v0
# The example panels and suites, once (later runs keep them, edits included).
"$BIN/python" manage.py load_examples -v0
"$BIN/python" manage.py ensure_admin --url "http://$HOST:$PORT/"
echo "MAGI is starting on http://$HOST:$PORT/ (Ctrl-C stops it)."
exec "$BIN/daphne" -b "$HOST" -p "$PORT" magi_site.asgi:application
