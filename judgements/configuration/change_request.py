"""Who makes a change of configuration, and against what: the one description the API,
the pages and the command line hand to panel_config, suite_config and the others."""

from dataclasses import dataclass

from django.contrib.auth.models import User

from judgements.core import etags
from judgements.models import Team


@dataclass(frozen=True)
class Change:
    """Who changes, and how: `by` the token's user, `team` the token's team (the
    default of a panel's), `if_match` the ETag the change was made against."""

    by: User
    team: Team | None = None
    if_match: str = etags.ANY
