"""Teams and users as configuration names them: a team by its name, a user by their
username. What the caller may not see is as unknown as what does not exist."""

from django.contrib.auth.models import User

from judgements.core import text
from judgements.models import Team, policy


def team_named(name: str, by: User) -> Team | None:
    """The team called `name` that `by` is in (staff: any team)."""
    teams = policy.teams_visible(Team.objects.all(), by)
    return teams.filter(name=name).first()


def no_team(name: str, by: User) -> str:
    which = "" if by.is_staff else " that you are in"
    return f"No team {text.escaped(name)!r}{which}."


def users_named(names: list[str]) -> tuple[list[User], list[str]]:
    """The users with these usernames, in the order given, and the names no user has."""
    found = {user.get_username(): user for user in User.objects.filter(username__in=names)}
    unknown = [name for name in names if name not in found]
    return [found[name] for name in dict.fromkeys(names) if name in found], unknown


def no_users(unknown: list[str]) -> str:
    return "No user called " + ", ".join(repr(text.escaped(name)) for name in unknown) + "."
