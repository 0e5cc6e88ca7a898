# Originals done within a running chunk, for the live generation progress.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("candidates", "0005_predicted_label"),
    ]

    operations = [
        migrations.AddField(
            model_name="generationchunk",
            name="originals_done",
            field=models.PositiveIntegerField(default=0),
        ),
    ]
