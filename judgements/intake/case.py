"""A case: one typed value from every way in to the row.

The page (intake/cases.py `cleaned_case`), the API, the MCP tools and `manage.py judge`
(their JSON validated where it comes in by its pydantic face, intake/schemas.py
`CaseJson`, whose `case()` is this) and evaluation runs (evaluations/runs.py `run_case`)
each make a `Case` with its `CaseAgent`s; intake/start.py `submit` carries it through its
checks (the saved panel a JSON case names looked up in its step 3, intake/json_cases.py
`resolve_case`), and intake/rows.py makes the judgement's rows from it. Frozen: a step
that adds to it (the panel looked up, the prompt variants) makes a new one.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from judgements.models.evaluations import SuiteCase
from judgements.models.panels import Panel, StoredAgent


@dataclass(frozen=True)
class CaseAgent:
    """One agent of a case, validated (intake/schemas.py Agent, the page's AgentForm)."""

    name: str
    model: str
    criteria: str

    @classmethod
    def of(cls, agent: StoredAgent | Mapping[str, str]) -> "CaseAgent":
        """From an agent as a saved panel or an evaluation run stores it."""
        return cls(name=agent["name"], model=agent["model"], criteria=agent["criteria"])

    def stored(self) -> StoredAgent:
        """As a saved panel and an evaluation run store it, and a certificate's fingerprint
        reads it."""
        return StoredAgent(name=self.name, model=self.model, criteria=self.criteria)


def agents_of(agents: Iterable[StoredAgent] | Iterable[Mapping[str, str]]) -> tuple[CaseAgent, ...]:
    return tuple(CaseAgent.of(agent) for agent in agents)


@dataclass(frozen=True)
class Case:
    """What a judgement is started from, validated and resolved.

    `hold_contested` and `hold_unmeasured` None: as the saved panel or the deployment
    says (intake/rows.py). `prompt_variants` None: not chosen by the caller, the saved
    panel's or the site's default (start.py `with_variants`); () the prompts as first
    measured. `suite_case`, `repeat` and `plain_call` are an evaluation run's.
    `panel_named`: a saved panel's name or id as JSON sent it, in place of agents; submit
    looks it up (json_cases.resolve_case), filling `panel` and `agents` and clearing it."""

    title: str
    content: str
    agents: tuple[CaseAgent, ...]
    hold_contested: bool | None = None
    # The saved panel it starts from (panels/saved_panels.py), its agents copied above.
    panel: Panel | None = None
    # Where its end is POSTed (outcome/webhooks.py), checked: the API's and MCP's only.
    callback_url: str | None = None
    prompt_variants: tuple[str, ...] | None = None
    hold_unmeasured: bool | None = None
    suite_case: SuiteCase | None = None
    repeat: int | None = None
    plain_call: bool = False
    panel_named: str | int | None = None

    def models(self) -> list[str]:
        return [agent.model for agent in self.agents]
