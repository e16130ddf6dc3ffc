"""docs/settings.md, generated from the settings (`python -m magi_site.settings_docs >
docs/settings.md`): a table per area of `MagiSettings`, headed by the `# --- Title`
comment above its fields, then a provider's."""

import inspect
import sys
from typing import cast

from pydantic.fields import FieldInfo

from magi_site.environment import MagiSettings
from magi_site.model_settings import ProviderSettings
from magi_site.settings_kit import BASE_DIR

DOCS_PATH = BASE_DIR / "docs" / "settings.md"

DOCS_INTRO = """# Settings

Every variable is read once at start-up into one typed object (`MagiSettings` in
`magi_site/environment.py`), which this page is generated from
(`.venv/bin/python -m magi_site.settings_docs > docs/settings.md`; a test fails when it
is out of date). A value that does not parse (`DEBUG=maybe`, `MAGI_LLM_TIMEOUT=soon`) or a
`MAGI_*` name MAGI does not know (a typo such as `MAGI_LLM_TIMOUT`, or
`MAGI_PROVIDER_X_*` for a provider not named in `MAGI_PROVIDERS`) stops start-up with a
message naming the variable; every `manage.py` command then prints that one line and exits
2. An empty variable means its default.
"""

PROVIDERS_INTRO = """## One provider: `MAGI_DEFAULT_*` and `MAGI_PROVIDER_<NAME>_*`

The default provider is whatever the `openai` SDK reads (`OPENAI_BASE_URL`,
`OPENAI_API_KEY`); `MAGI_DEFAULT_*` overrides it. Each provider named in
`MAGI_PROVIDERS` is set by `MAGI_PROVIDER_<NAME>_*`. Unset values fall back to the global
LLM settings above.
"""


def shown_default(field: FieldInfo) -> str:
    # setting() makes every field: its extra is {"shown": a string}, or None.
    extra = cast(dict[str, str], field.json_schema_extra or {})
    if "shown" in extra:
        return extra["shown"]
    value = field.default
    if isinstance(value, bool):
        return "on" if value else "off"
    if value in ([], {}, "", None):
        return "—"
    if isinstance(value, list):
        return "`" + ",".join(value) + "`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"`{value}`"


def table(fields: dict[str, FieldInfo], prefix: str = "") -> list[str]:
    rows = ["| variable | meaning | default |", "| --- | --- | --- |"]
    for name, field in fields.items():
        rows.append(f"| `{prefix}{name.upper()}` | {field.description} | {shown_default(field)} |")
    return rows


def markdown() -> str:
    """docs/settings.md: a table per section of MagiSettings, then a provider's."""
    lines = [DOCS_INTRO]
    section: dict[str, FieldInfo] = {}
    title = ""
    for name, field in MagiSettings.model_fields.items():
        heading = section_of(name)
        if heading != title:
            if section:
                lines += [f"## {title}", "", *table(section), ""]
            title, section = heading, {}
        section[name] = field
    lines += [f"## {title}", "", *table(section), "", PROVIDERS_INTRO]
    lines += table(ProviderSettings.model_fields, "MAGI_PROVIDER_<NAME>_")
    return "\n".join(lines) + "\n"


def section_of(name: str) -> str:
    """The `# --- Title` comment above a field in the module of the area that defines it."""
    area = next(cls for cls in MagiSettings.__mro__ if name in vars(cls).get("__annotations__", {}))
    source = inspect.getsource(sys.modules[area.__module__])
    before = source[: source.index(f"    {name}: ")]
    return before[before.rindex("# --- ") + 6 :].split("\n", 1)[0].strip()


if __name__ == "__main__":
    print(markdown(), end="")
