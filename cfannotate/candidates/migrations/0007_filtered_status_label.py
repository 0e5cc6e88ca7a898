# The filtered status is named without "(fluency)": sanity filters drop candidates too,
# and the review row says which filter did.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("candidates", "0006_chunk_originals_done"),
    ]

    operations = [
        migrations.AlterField(
            model_name="candidate",
            name="status",
            field=models.CharField(
                choices=[
                    ("generated", "Generated"),
                    ("filtered", "Filtered out"),
                    ("selected", "Selected for labeling"),
                    ("rejected", "Rejected by the researcher"),
                    ("gold", "Gold (known labels)"),
                ],
                default="generated",
                max_length=20,
            ),
        ),
    ]
