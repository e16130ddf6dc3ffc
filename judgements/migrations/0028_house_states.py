"""Issue 57: a reviewer's email has a state of its own, as a judgement and a webhook
delivery have (models/notifications.py `NotificationStates`): unsent or sent, moved by the
one transition function (models/states.py). The rows already sent (`sent_at` set) are
"sent"."""

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def mark_sent(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    Notification = apps.get_model("judgements", "Notification")
    Notification.objects.filter(sent_at__isnull=False).update(status="sent")


class Migration(migrations.Migration):
    dependencies = [
        ("judgements", "0027_escalation"),
    ]

    operations = [
        migrations.AddField(
            model_name="notification",
            name="status",
            field=models.CharField(
                choices=[("unsent", "Unsent"), ("sent", "Sent")], default="unsent", max_length=16
            ),
        ),
        migrations.RunPython(mark_sent, migrations.RunPython.noop),
    ]
