"""Who a person is at the identity provider: the link between the provider's subject and a
MAGI user, made at their first OpenID Connect sign-in (judgements/identity/people.py)."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from judgements.models.choices import ids_from_one


class Identity(models.Model):
    """One provider account (issuer + subject, the ID token's `iss` and `sub`) signed in as
    one MAGI user. The subject, not the email, is what a returning person is known by: an
    email can change hands, a subject does not."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="identities"
    )
    issuer = models.CharField(max_length=255)
    subject = models.CharField(max_length=255)
    created_at = models.DateTimeField(default=timezone.now)
    last_sign_in_at = models.DateTimeField(default=timezone.now)
    # The groups the provider listed at the last sign-in, as it said them.
    groups = models.JSONField(default=list, blank=True)

    class Meta:
        verbose_name_plural = "identities"
        constraints = [
            ids_from_one("identity_id_from_one"),
            models.UniqueConstraint(
                fields=["issuer", "subject"], name="identity_unique_issuer_subject"
            ),
        ]
        indexes = [models.Index(fields=["user"], name="identity_user_idx")]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer} as {self.user}"
