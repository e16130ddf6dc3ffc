# Issue 49: the identity provider's reviewer role is a property of a membership, asked
# whenever reviewers are wanted, instead of a copy onto the team's panels at sign-in.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("judgements", "0020_check_kinds"),
    ]

    operations = [
        migrations.AddField(
            model_name="membership",
            name="reviews_all",
            field=models.BooleanField(
                default=False,
                help_text="Reviews every panel of the team (the identity provider's reviewer role).",
            ),
        ),
    ]
