"""The people an identity provider's ID tokens make: a MAGI user per provider account,
created at the first sign-in from the token's email and name (or linked to a local user
with that email, only when the provider says it is verified), and their teams, panel
reviewing and staff role following the token's groups through MAGI_OIDC_GROUPS at every
sign-in, each change audited with the provider as its actor.

Only what the mapping names is the provider's to change: a team no group maps to keeps
the members `manage.py team` gave it, and `is_staff` is left alone unless some group maps
to staff."""

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from judgements.configuration import people, team_config
from judgements.configuration.teams import record, set_members, set_reviewing, set_reviews_all
from judgements.core.json_values import JsonObject
from judgements.core.settings_read import GroupSetting
from judgements.identity.provider import SignInRefused
from judgements.models import AuditSubject, Identity, Membership, Panel, Team
from judgements.models.magi_settings import magi_settings


@dataclass(frozen=True)
class Person:
    """What MAGI reads from a checked ID token."""

    issuer: str
    subject: str
    email: str
    email_verified: bool
    name: str
    groups: tuple[str, ...]


@dataclass(frozen=True)
class Grants:
    """What a person's groups give: the teams they are in, those whose panels they
    review, and staff."""

    teams: frozenset[str]
    reviews: frozenset[str]
    staff: bool

    @property
    def anything(self) -> bool:
        return bool(self.teams or self.staff)


def person_from(claims: JsonObject, issuer: str) -> Person:
    """The person an ID token's claims describe; SignInRefused when they lack an email."""
    email = str(claims.get("email") or "").strip()
    if not email:
        raise SignInRefused(
            "The provider did not send your email address: MAGI needs the `email` scope and claim."
        )
    claimed = claims.get(magi_settings.MAGI_OIDC_GROUPS_CLAIM) or []
    # A list of group names, or one name; anything else names no group.
    listed = [claimed] if isinstance(claimed, str) else claimed
    if not isinstance(listed, list):
        listed = []
    name = str(claims.get("name") or "").strip()
    return Person(
        issuer=issuer,
        subject=str(claims["sub"]),
        email=email,
        email_verified=claims.get("email_verified") is True,
        name=name,
        groups=tuple(str(group) for group in listed),
    )


def grants_for(groups: tuple[str, ...], mapping: dict[str, GroupSetting]) -> Grants:
    """What these groups give under the mapping (MAGI_OIDC_GROUPS): a reviewer of a team is
    also its member."""
    given = [mapping[group] for group in groups if group in mapping]
    reviews = frozenset(grant["team"] for grant in given if grant["role"] == "reviewer")
    teams = frozenset(grant["team"] for grant in given if grant["team"]) | reviews
    return Grants(teams=teams, reviews=reviews, staff=any(g["role"] == "staff" for g in given))


def no_group_refusal(person: Person) -> str:
    listed = ", ".join(person.groups) if person.groups else "none"
    return (
        f"You signed in as {person.email}, but none of your groups gives access to MAGI "
        f"(your groups: {listed}). Ask your administrator to add you to one of MAGI's "
        "groups, then sign in again."
    )


def sign_in(person: Person) -> User:
    """The user this person signs in as, their teams and roles brought in line with their
    groups. SignInRefused, with nothing stored for a newcomer, when no group gives access,
    when the email is a local user's but not verified, or when the account is disabled.
    A known person in no mapped group loses what the mapping gave them, then is refused."""
    mapping: dict[str, GroupSetting] = magi_settings.MAGI_OIDC_GROUPS
    grants = grants_for(person.groups, mapping)
    with transaction.atomic():
        identity = (
            Identity.objects.select_related("user")
            .filter(issuer=person.issuer, subject=person.subject)
            .first()
        )
        if identity is None and not grants.anything:
            raise SignInRefused(no_group_refusal(person))
        user = identity.user if identity is not None else first_user(person)
        if not user.is_active:
            raise SignInRefused(
                "Your MAGI account is disabled. Ask your administrator to enable it."
            )
        follow_groups(user, grants, mapping, person.issuer)
        # Read only when an account is linked: a returning sign-in changes no audited state.
        before = people.state(user) if identity is None else None
        if identity is None:
            identity = Identity(user=user, issuer=person.issuer, subject=person.subject)
        identity.last_sign_in_at = timezone.now()
        identity.groups = list(person.groups)
        identity.save()
        if before is not None:  # the account signs in as this user from now on: audited
            record(
                AuditSubject.USER,
                user_target(user),
                None,
                before,
                people.state(user),
                person.issuer,
            )
    if not grants.anything:
        raise SignInRefused(no_group_refusal(person))
    return user


def first_user(person: Person) -> User:
    """A newcomer's user: the local user with their email when the provider vouches for
    it, else a new one (no password: they sign in through the provider)."""
    local = list(User.objects.filter(email__iexact=person.email)[:2])
    if len(local) > 1:
        raise SignInRefused(
            f"Several MAGI accounts have the email {person.email}; an administrator must "
            "merge them before you can sign in."
        )
    if local:
        if not person.email_verified:
            raise SignInRefused(
                f"A MAGI account already has the email {person.email}, and the provider "
                "does not say the address is verified, so MAGI will not sign you in as it. "
                "Verify your email at the provider, or ask your administrator."
            )
        return local[0]
    first, _, last = person.name.partition(" ")
    user = User(
        username=free_username(person.email),
        email=person.email,
        first_name=first[:150],
        last_name=last[:150],
    )
    user.set_unusable_password()
    user.save()
    # Made by the provider: audited as every user made (the account that signs in as them
    # follows in sign_in's own row).
    people.record_made(user, None, person.issuer)
    return user


def user_target(user: User) -> str:
    return f"user {user.pk} ({user.get_username()})"


def free_username(email: str) -> str:
    """The email as the username (150 characters at most), numbered if it is taken."""
    base = email[:140]
    candidate, number = base, 1
    while User.objects.filter(username=candidate).exists():
        number += 1
        candidate = f"{base}-{number}"
    return candidate


def follow_groups(user: User, grants: Grants, mapping: dict[str, GroupSetting], actor: str) -> None:
    """Teams, reviewing and staff as the groups say, for what the mapping names."""
    for name in sorted({grant["team"] for grant in mapping.values() if grant["team"]}):
        team = team_config.provided(name, actor)
        follow_membership(team, user, name in grants.teams, actor)
        follow_reviewing(team, user, name in grants.reviews, actor)
    # A superuser keeps staff whatever the groups say: break glass must still open the admin.
    if (
        any(grant["role"] == "staff" for grant in mapping.values())
        and not user.is_superuser
        and user.is_staff != grants.staff
    ):
        record(
            AuditSubject.STAFF,
            user_target(user),
            None,
            user.is_staff,
            grants.staff,
            actor,
        )
        user.is_staff = grants.staff
        user.save(update_fields=["is_staff"])


def follow_membership(team: Team, user: User, member: bool, actor: str) -> None:
    present = Membership.objects.filter(team=team, user=user).exists()
    if present == member:
        return
    others = list(team.members.exclude(pk=user.pk))
    set_members(team, [*others, user] if member else others, None, actor)


def follow_reviewing(team: Team, user: User, reviewer: bool, actor: str) -> None:
    """A reviewer of every panel of the team, those given to it later included, or of
    none. The role lives on the membership (Membership.reviews_all) and is asked whenever
    reviewers are wanted, never copied onto panels: a copy would miss every panel made or
    moved into the team until the next sign-in. The reviewer role in a team the mapping
    names is the provider's, so someone it does not make a reviewer is also taken off the
    panels' named reviewers (which also clears the copies earlier versions made)."""
    set_reviews_all(team, user, reviewer, None, actor)
    if reviewer:
        return
    for panel in Panel.objects.filter(team=team, reviewers=user):
        others = [other for other in panel.reviewers.all() if other.pk != user.pk]
        set_reviewing(panel, None, reviewers=others, actor=actor)
