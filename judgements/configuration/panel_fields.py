"""A saved panel as written, named once: the document the API takes (PanelFields, as
api/config_schemas.py's PanelWrite validated it), the settings a write puts over a page's
form (PanelSettings, looked up) and the fields `saving.write` stores (PanelRow).
configuration/panel_config.py reads the document; configuration/saving.py writes the row."""

from typing import TypedDict

from judgements.models import Panel, Team
from judgements.models.panels import StoredAgent


class PanelDefaults(TypedDict, total=False):
    """The settings of a panel document (PanelFields) that may be left out."""

    description: str
    team: str | None
    hold_contested: bool | None
    run_checks: bool | None
    prompt_variants: list[str] | None
    escalate_to: str | int | None
    notify_contested: bool
    reviewers: list[str]
    team_reviews: bool
    four_eyes: bool
    example: bool


class PanelFields(PanelDefaults):
    """A panel document, as the API's PanelWrite validated it (a directory's panel file
    is sent as one): its name and agents, and each setting it gives. A setting left out
    takes its default (panel_config.DEFAULTS); the team, the caller's token's team."""

    name: str
    agents: list[StoredAgent]


class PanelSettings(TypedDict, total=False):
    """What the API writes over a page's form (configuration/panel_config.py): the
    panel's checks, notification and prompt choices, its team and the panel it escalates
    to, looked up."""

    hold_contested: bool | None
    run_checks: bool | None
    notify_contested: bool
    prompt_variants: list[str] | None
    team: Team | None
    escalate_to: Panel | None


class PanelRow(PanelSettings):
    """A panel's fields as `write` stores them: the form's, and the settings over them."""

    name: str
    description: str
    agents: list[StoredAgent]
