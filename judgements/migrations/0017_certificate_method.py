"""Certificates record how their rule was chosen and tested (the split and the fixed
sequence), and every certificate made before is voided: it stated the bound of a rule
picked by searching thousands on the same verdicts, a promise the search had spent."""

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps
from django.utils import timezone

VOIDED = (
    "Made by a search that stated its chosen rule's bound as if it were the only rule "
    "tried, which overstates it; certify the panel again."
)


def void_searched(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    Certificate = apps.get_model("judgements", "Certificate")
    Certificate.objects.filter(voided_at__isnull=True).update(
        voided_at=timezone.now(), void_reason=VOIDED, method="search"
    )


class Migration(migrations.Migration):
    dependencies = [
        ("judgements", "0016_budgets"),
    ]

    operations = [
        migrations.AddField(
            model_name="certificate",
            name="method",
            field=models.CharField(default="", max_length=40),
        ),
        migrations.AddField(
            model_name="certificate",
            name="split",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="certificate",
            name="tested",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.RunPython(void_searched, migrations.RunPython.noop),
    ]
