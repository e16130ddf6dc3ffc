# Issue 48: a saved panel's prompt variants are a setting of the panel.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('judgements', '0024_audit_chain'),
    ]

    operations = [
        migrations.AddField(
            model_name='panel',
            name='prompt_variants',
            field=models.JSONField(blank=True, null=True),
        ),
    ]
