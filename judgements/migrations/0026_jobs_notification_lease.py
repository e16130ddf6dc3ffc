"""A reviewer's email is held by the same lease as a judgement and a webhook delivery
(judgements/models/leases.py): its `claimed_until` becomes `lease_expires_at`, beside the
worker holding it (`lease_owner`)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("judgements", "0025_panel_variants"),
    ]

    operations = [
        migrations.RenameField(
            model_name="notification",
            old_name="claimed_until",
            new_name="lease_expires_at",
        ),
        migrations.AddField(
            model_name="notification",
            name="lease_owner",
            field=models.CharField(blank=True, max_length=100),
        ),
    ]
