import django.core.validators
from django.db import migrations, models


def counts_to_shares(apps, schema_editor):
    """`min_gold_correct` counted right answers out of C.2's six gold counterfactuals."""
    Campaign = apps.get_model("campaigns", "Campaign")
    for campaign in Campaign.objects.only("id", "min_gold_correct"):
        share = min(campaign.min_gold_correct / 6, 1.0)
        Campaign.objects.filter(id=campaign.id).update(min_gold_share=share)


def shares_to_counts(apps, schema_editor):
    Campaign = apps.get_model("campaigns", "Campaign")
    for campaign in Campaign.objects.only("id", "min_gold_share"):
        count = round(campaign.min_gold_share * 6)
        Campaign.objects.filter(id=campaign.id).update(min_gold_correct=count)


class Migration(migrations.Migration):
    dependencies = [("campaigns", "0002_quality_settings")]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="min_gold_share",
            field=models.FloatField(
                default=4 / 6,
                help_text="Share of the gold counterfactuals a worker must get right (rounded "
                "to the nearest count: 0.67 of 6 is 4); every gold right always passes.",
                validators=[
                    django.core.validators.MinValueValidator(0.0),
                    django.core.validators.MaxValueValidator(1.0),
                ],
            ),
        ),
        migrations.RunPython(counts_to_shares, shares_to_counts),
        migrations.RemoveField(model_name="campaign", name="min_gold_correct"),
    ]
