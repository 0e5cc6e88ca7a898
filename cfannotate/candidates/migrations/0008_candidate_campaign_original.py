# A campaign's candidates by original with the columns its reads over all of them use, so
# that those reads scan this index, not the wide rows: the review list's deep pages, the
# generation overview's per-original counts, the campaign list's counts.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0010_campaign_creation_token"),
        ("candidates", "0007_filtered_status_label"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="candidate",
            index=models.Index(
                fields=[
                    "campaign",
                    "original",
                    "status",
                    "control_code",
                    "source",
                    "fluency_full",
                    "id",
                ],
                name="candidate_campaign_original",
            ),
        ),
    ]
