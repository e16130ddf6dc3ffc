"""People: users made with an email address (notifications need one), made staff or not,
and API tokens issued for them, a team's bot included. `manage.py user`, `manage.py
api_token` and the API's /api/users/ and /api/tokens/ (staff only) all go through here,
each change audited with who made it (None: the operator's command line).

A user made here has no password: a program uses a token; a person is given one with
`manage.py changepassword` or in the admin.
"""

import hashlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypedDict

from django import forms
from django.contrib.auth.models import Permission, User
from django.db import transaction
from django.db.models import Q

from judgements.configuration import names, teams
from judgements.core.errors import Forbidden, InvalidInput
from judgements.models import ApiToken, AuditSubject, Identity, Team

STAFF_ONLY = "Only staff create users and issue tokens for others."
TOKEN_NAME_MAX_CHARS = 100  # ApiToken.name's max_length


class UserForm(forms.ModelForm[User]):
    """A new user's username (Django's rules: letters, digits and @.+-_, unique) and
    email address, required here: it is how MAGI tells reviewers what waits."""

    email = forms.EmailField(max_length=254)

    class Meta:
        model = User
        fields = ["username", "email"]


class UserState(TypedDict):
    """A user as the audit records it (people.state), keys in the order its rows hold them."""

    username: str
    email: str
    is_staff: bool
    is_superuser: bool
    is_active: bool
    sign_ins: list[str]  # "issuer subject" of each provider account that signs in as them
    password_sha256: str
    groups: list[str]
    permissions: list[str]  # "app.codename"


class TokenState(TypedDict):
    """A token as the audit records it (people.token_state), keys in its rows' order."""

    user: str
    name: str
    team: str | None
    prefix: str
    key_hash: str
    revoked: bool


def state(user: User) -> UserState:
    """A user as the audit records it: who, and what lets them in and how far (active,
    staff, superuser, the provider accounts, issuer and subject, that sign in as them:
    pointing one at another user is signing in as them; the SHA-256 of their password
    hash, never the hash: one swapped for a hash of a password someone knows differs;
    their groups, and the permissions they and their groups hold)."""
    accounts = Identity.objects.filter(user=user).order_by("issuer", "subject")
    return {
        "username": user.get_username(),
        "email": user.email,
        "is_staff": user.is_staff,
        "is_superuser": user.is_superuser,
        "is_active": user.is_active,
        "sign_ins": [
            f"{issuer} {subject}" for issuer, subject in accounts.values_list("issuer", "subject")
        ],
        "password_sha256": password_sha256(user.password),
        "groups": sorted(user.groups.values_list("name", flat=True)),
        "permissions": permissions_of(user),
    }


def permissions_of(user: User) -> list[str]:
    """The permissions the user holds, their own and their groups', as `app.codename`
    (a superuser's flag, compared apart, holds every one)."""
    held = Permission.objects.filter(Q(user=user) | Q(group__user=user))
    pairs = held.values_list("content_type__app_label", "codename").distinct()
    return sorted(f"{app}.{codename}" for app, codename in pairs)


def user_target(user_id: int) -> str:
    return f"user {user_id}"


def token_target(token_id: int) -> str:
    return f"token {token_id}"


def record_made(user: User, by: User | None, actor: str = "") -> None:
    """The audit row of a user just made (`by` None: the operator's command line; `actor`
    says what made it when no user did)."""
    teams.record(AuditSubject.USER, user_target(user.pk), by, None, state(user), actor)


def record_rehashed(user_id: int, old_hash: str, actor: str) -> None:
    """The audit row of a password hash Django changed by itself (its hashers upgraded at
    a sign-in): the user as they are, and as they were with the old hash."""
    user = User.objects.get(pk=user_id)
    after = state(user)
    before = after | {"password_sha256": password_sha256(old_hash)}
    teams.record(AuditSubject.USER, user_target(user_id), None, before, after, actor)


def password_sha256(password_hash: str) -> str:
    return hashlib.sha256(password_hash.encode()).hexdigest()


@contextmanager
def changes_audited(ids: Iterable[object], by: User | None, actor: str = "") -> Iterator[None]:
    """Around a change of these users by code MAGI does not own (Django's password pages
    and commands, its password hash upgraded at a sign-in, the admin's groups): an audit
    row for each whose audited state it changed. Ids not a user's are ignored; the caller
    holds the transaction where it can (not around a command's prompts)."""
    wanted = [pk for pk in ids if isinstance(pk, int) or (isinstance(pk, str) and pk.isdecimal())]
    before = {user.pk: state(user) for user in User.objects.filter(pk__in=wanted)}
    yield
    for user in User.objects.filter(pk__in=list(before)):
        teams.record(
            AuditSubject.USER, user_target(user.pk), by, before[user.pk], state(user), actor
        )


def token_state(token: ApiToken) -> TokenState:
    """A token as the audit records it: whose, its name, its team, its prefix, and what
    makes it work: the hash of its key (never the key) and whether it is revoked, so a
    hash swapped for a key someone knows, or a revocation undone, differs from the log."""
    team = token.team.name if token.team_id is not None and token.team else None
    return {
        "user": token.user.get_username(),
        "name": token.name,
        "team": team,
        "prefix": token.prefix,
        "key_hash": token.key_hash,
        "revoked": token.revoked_at is not None,
    }


def require_staff(by: User | None) -> None:
    """The command line's operator (None) and staff only."""
    if by is not None and not by.is_staff:
        raise Forbidden(STAFF_ONLY)


def create_user(by: User | None, username: str, email: str, is_staff: bool = False) -> User:
    """A new user with no password; InvalidInput names `username` or `email`."""
    require_staff(by)
    form = UserForm({"username": username, "email": email})
    if not form.is_valid():
        raise InvalidInput(
            {field: [str(m) for m in messages] for field, messages in form.errors.items()}
        )
    with transaction.atomic():
        user = form.save(commit=False)
        user.is_staff = is_staff
        user.set_unusable_password()
        user.save()
        record_made(user, by)
    return user


def set_staff(by: User | None, username: str, is_staff: bool) -> User:
    require_staff(by)
    user = user_named(username, "username")
    before = state(user)
    User.objects.filter(pk=user.pk).update(is_staff=is_staff)
    user.refresh_from_db()
    teams.record(AuditSubject.USER, user_target(user.pk), by, before, state(user))
    return user


def user_named(username: str, field: str) -> User:
    users, unknown = names.users_named([username])
    if unknown:
        raise InvalidInput({field: [names.no_users(unknown)]})
    return users[0]


def listing(by: User | None) -> list[User]:
    """Every user, but a row with an id below 1: neither MAGI nor Django makes one, so it
    was written into the database outside both; `manage.py audit verify` names it
    (audit/coverage.py ids_below_one), and no answer can give it an id."""
    require_staff(by)
    return list(User.objects.filter(pk__gte=1).prefetch_related("teams").order_by("username"))


@dataclass(frozen=True)
class Issued:
    token: ApiToken
    key: str  # shown once, never stored


def issue_token(by: User | None, username: str, name: str, team_name: str | None) -> Issued:
    """A token of `username`'s, given to the team `team_name` when named (its judgements
    are the team's); the user need not be a member. InvalidInput names `user`, `name` or
    `team`."""
    require_staff(by)
    errors: dict[str, list[str]] = {}
    users, unknown = names.users_named([username])
    if unknown:
        errors["user"] = [names.no_users(unknown)]
    if not name.strip() or len(name) > TOKEN_NAME_MAX_CHARS:
        errors["name"] = [f"Must be 1 to {TOKEN_NAME_MAX_CHARS} characters."]
    team: Team | None = None
    if team_name is not None:
        team = Team.objects.filter(name=team_name).first()
        if team is None:
            errors["team"] = [f"No team {team_name!r}."]
    if errors:
        raise InvalidInput(errors)
    return issued(by, users[0], name.strip(), team)


def issue_own_token(user: User, name: str) -> Issued:
    """A token a signed-in user makes for themselves on the tokens page (the form has
    checked its name), audited as every token is."""
    return issued(user, user, name, None)


def issued(by: User | None, user: User, name: str, team: Team | None) -> Issued:
    with transaction.atomic():
        token, key = ApiToken.issue(user, name)
        if team is not None:
            teams.assign(token, team)
        teams.record(AuditSubject.TOKEN, token_target(token.pk), by, None, token_state(token))
    return Issued(token, key)


def revoke_token(by: User, token: ApiToken) -> None:
    """Stop the token working, audited: `audit verify` names a revocation undone in the
    database. Revoking it again changes nothing."""
    with transaction.atomic():
        before = token_state(token)
        if token.revoke():
            teams.record(AuditSubject.TOKEN, token_target(token.pk), by, before, token_state(token))
