"""The configuration files' limits, declared once: read from the server's own schemas
(the API's write schemas, a suite line's, the agent table's) and written into the client
package as magi_client/limits.py, which the client's JSON Schemas (magi_client/schema.py)
are built from; and where each kind `magi export` reads is listed, read from the
registry of kinds (api/resources.py), as magi_client/kinds.py. The client cannot import
Django; it carries these files instead, and tests/judgements/api/test_config_format.py
fails when they differ. After changing a limit or a kind on the server:

    DEBUG=1 .venv/bin/python manage.py shell -c \\
        "from judgements.api import config_format; config_format.write()"

and then the published schemas (docs/config-as-code.md, "JSON Schemas").
"""

from pathlib import Path

from judgements import models
from judgements.api import config_schemas, resources
from judgements.api import kinds as _kinds  # noqa: F401 - registers every kind
from judgements.evaluations.suite_schema import SuiteCaseLine

CLIENT = Path(__file__).resolve().parents[2] / "clients/magi-client/src/magi_client"
CLIENT_LIMITS = CLIENT / "limits.py"
CLIENT_KINDS = CLIENT / "kinds.py"
HEADER = '''"""The configuration format's limits, as the server's own schemas declare them: written
by judgements/api/config_format.py from them, never by hand (the client cannot import the
server); tests/judgements/api/test_config_format.py fails when this file differs.
MAGI_CONTENT_MAX_CHARS is a deployment's setting: its default is here, and a deployment's
lower one shows at plan time, in the server's dry run of the batch."""

'''


def limits() -> dict[str, int]:
    """Every limit a configuration file's field has, by the client's name for it."""
    panel = config_schemas.PanelWrite.model_json_schema()
    agent = panel["$defs"]["Agent"]["properties"]
    team = config_schemas.TeamWrite.model_json_schema()["properties"]
    case = SuiteCaseLine.model_json_schema()["properties"]
    panel_fields = panel["properties"]
    return {
        "PANEL_NAME_MAX_CHARS": panel_fields["name"]["maxLength"],
        "PANEL_DESCRIPTION_MAX_CHARS": panel_fields["description"]["maxLength"],
        "REVIEWERS_MAX_ITEMS": panel_fields["reviewers"]["maxItems"],
        "AGENT_NAME_MAX_CHARS": agent["name"]["maxLength"],
        "AGENT_MODEL_MAX_CHARS": models.Agent._meta.get_field("model").max_length,
        "CRITERIA_MAX_CHARS": agent["criteria"]["maxLength"],
        "USERNAME_MAX_CHARS": team["members"]["items"]["maxLength"],
        "MEMBERS_MAX_ITEMS": team["members"]["maxItems"],
        "CASE_ID_MAX_CHARS": case["id"]["maxLength"],
        "CASE_TITLE_MAX_CHARS": case["title"]["maxLength"],
        "CONTENT_MAX_CHARS": case["content"]["maxLength"],
        "TAG_MAX_CHARS": case["tags"]["items"]["maxLength"],
        "TAGS_MAX_ITEMS": case["tags"]["maxItems"],
    }


def client_module() -> str:
    """magi_client/limits.py as it must read."""
    return HEADER + "".join(f"{name} = {value:_}\n" for name, value in limits().items())


KINDS_HEADER = '''"""Where `magi export` reads each kind of configuration, as the server registers
them: written by judgements/api/config_format.py from its registry
(judgements/api/resources.py), never by hand; tests/judgements/api/test_config_format.py
fails when this file differs. Each kind: the path of its list, and the key of the list in
its answer."""

'''


def client_kinds() -> str:
    """magi_client/kinds.py as it must read: every exported kind, in registered order."""
    lists = "".join(
        f'    "{kind.kind}": ("{kind.collection}", "{kind.plural}"),\n'
        for kind in resources.registered()
        if kind.versioned
    )
    return KINDS_HEADER + "LISTS: dict[str, tuple[str, str]] = {\n" + lists + "}\n"


def write(path: Path = CLIENT_LIMITS, kinds_path: Path = CLIENT_KINDS) -> Path:
    path.write_text(client_module(), encoding="utf-8")
    kinds_path.write_text(client_kinds(), encoding="utf-8")
    return path
