"""The signing key kept like the secret key, its kid, rotation keeping old keys for
checking with their retirement signed, a key added beside the data not trusted, and
`manage.py audit keys | new-key | rotate-key | retire-key` (judgements/audit/keys.py,
magi_client/receipts.py trusted_keys)."""

import io
import json
import stat

import pytest
from django.core.management import call_command

from judgements.audit import keys
from magi_client.canonical import canonical
from magi_client.receipts import (
    NotValid,
    b64url,
    check_signature,
    jwk_of,
    keys_of,
    trusted_keys,
    unb64url,
)


@pytest.fixture
def embedded(settings, tmp_path):
    """No key in the environment: the one kept in var/ (a fresh var/ here)."""
    settings.MAGI_AUDIT_SIGNING_KEY = ""
    settings.MAGI_AUDIT_RETIRED_KEYS = []
    settings.VAR_DIR = tmp_path
    return tmp_path


def signed(body: dict) -> dict:
    return {"head": body, "signature": keys.sign(body)}


def test_the_embedded_key_is_made_once_in_var_readable_by_its_owner_only(embedded):
    kid = keys.current_kid()
    path = embedded / keys.KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert keys.current_kid() == kid
    assert [key["kid"] for key in keys.jwks()["keys"]] == [kid]


def test_rotation_keeps_the_old_key_for_checking(embedded):
    before = signed({"seq": 1})
    old, new = keys.rotate()
    assert old != new and keys.current_kid() == new
    published = keys_of(keys.jwks())
    assert set(published) == {old, new}
    check_signature(before, "head", published)
    check_signature(signed({"seq": 2}), "head", published)


def test_the_key_that_tags_entries_follows_the_signing_key(embedded, settings):
    """Derived from the current seed (core/entry_tags.py), kept's changes followed."""
    first = keys.tag_key()
    assert first == keys.tag_key_of(keys.kept_seed())
    keys.rotate()
    assert keys.tag_key() == keys.tag_key_of(keys.kept_seed()) != first
    settings.MAGI_AUDIT_SIGNING_KEY = keys.new_seed()
    assert keys.tag_key() not in (first, keys.tag_key_of(keys.kept_seed()))


def test_a_deployments_key_comes_from_the_environment(settings):
    settings.MAGI_AUDIT_SIGNING_KEY = keys.new_seed()
    document = signed({"seq": 3})
    check_signature(document, "head", keys_of(keys.jwks()))
    settings.MAGI_AUDIT_SIGNING_KEY = keys.new_seed()
    with pytest.raises(NotValid, match="not among the keys given"):
        check_signature(document, "head", keys_of(keys.jwks()))


def test_a_retired_key_in_the_environment_still_checks(settings):
    old_seed = keys.new_seed()
    settings.MAGI_AUDIT_SIGNING_KEY = old_seed
    document = signed({"seq": 4})
    retired = b64url(keys.public_bytes(keys.signing_key()))
    settings.MAGI_AUDIT_SIGNING_KEY = keys.new_seed()
    settings.MAGI_AUDIT_RETIRED_KEYS = [keys.retirement(retired)]
    check_signature(document, "head", keys_of(keys.jwks()))


def test_a_key_added_to_the_retired_keys_is_not_trusted(embedded):
    """An attacker who writes var/ appends a key of their own, bare or with a retirement
    signed by that same key: neither is trusted, and what signs with it fails."""
    honest = keys.current_kid()
    seed = keys.new_seed()
    own = keys.private_key(seed)
    public = b64url(keys.public_bytes(own))
    retired = canonical({"format": "magi-key-retired/1", "x": public})
    forged_retirement = {"kid": jwk_of(keys.public_bytes(own))["kid"],
                         "value": b64url(own.sign(retired))}  # fmt: skip
    with (embedded / keys.RETIRED_FILE).open("a") as handle:
        handle.write(public + "\n")
        handle.write(f"{public}.{forged_retirement['kid']}.{forged_retirement['value']}\n")
    trusted = trusted_keys(keys.jwks())
    assert set(trusted.keys) == {honest}
    assert trusted.refused and "not signed by a key trusted here" in trusted.refused[0]
    forged = {"head": {"seq": 5}, "signature": {"alg": "EdDSA", "kid": forged_retirement["kid"],
              "value": b64url(own.sign(canonical({"seq": 5})))}}  # fmt: skip
    with pytest.raises(NotValid, match="not among the keys given"):
        check_signature(forged, "head", trusted.keys)


def test_a_bad_key_is_refused_naming_the_setting(settings):
    settings.MAGI_AUDIT_SIGNING_KEY = "not-a-key"
    with pytest.raises(keys.KeyRefused, match="MAGI_AUDIT_SIGNING_KEY"):
        keys.current_kid()


@pytest.mark.django_db
def test_the_commands_print_and_rotate_the_keys(embedded):
    out = io.StringIO()
    call_command("audit", "keys", stdout=out)
    (key,) = json.loads(out.getvalue())["keys"]
    out = io.StringIO()
    call_command("audit", "rotate-key", stdout=out)
    assert out.getvalue().strip().endswith(f"{key['kid']} kept for checking")
    out = io.StringIO()
    call_command("audit", "new-key", stdout=out)
    assert len(unb64url(out.getvalue().strip())) == 32
    out = io.StringIO()
    call_command("audit", "retire-key", "--", key["x"], stdout=out)
    assert out.getvalue().strip().startswith(f"{key['x']}.{keys.current_kid()}.")


def test_retire_key_takes_a_key_that_begins_with_a_dash(embedded):
    # One key in 64 does, in base64url: as documented, after `--`.
    public = "-" + b64url(bytes(32))[1:]
    out = io.StringIO()
    call_command("audit", "retire-key", "--", public, stdout=out)
    assert out.getvalue().strip().startswith(f"{public}.{keys.current_kid()}.")


def test_rotate_key_refuses_a_deployments_key(settings):
    settings.MAGI_AUDIT_SIGNING_KEY = keys.new_seed()
    err = io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("audit", "rotate-key", stderr=err)
    assert exited.value.code == 2
    assert "invalid input: MAGI_AUDIT_SIGNING_KEY is set" in err.getvalue()
