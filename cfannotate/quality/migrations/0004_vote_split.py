"""The qualified votes behind each kept label: per label value, and how many judged valid."""

from collections import Counter, defaultdict

from django.db import migrations, models


def fill_vote_split(apps, schema_editor):
    """Fill the new fields of labels voted before them from the same judgments the vote
    counts (`quality.services.candidates_aggregate`): submitted real rounds with a label
    and a validity, of workers who are qualified."""
    AggregatedLabel = apps.get_model("quality", "AggregatedLabel")
    CampaignLabel = apps.get_model("campaigns", "CampaignLabel")
    Judgment = apps.get_model("labeling", "Judgment")
    WorkerQuality = apps.get_model("quality", "WorkerQuality")
    campaign_ids = AggregatedLabel.objects.values_list(
        "candidate__campaign_id", flat=True
    ).distinct()
    for campaign_id in campaign_ids:
        labels = list(
            CampaignLabel.objects.filter(campaign_id=campaign_id).values_list("value", flat=True)
        )
        qualified = set(
            WorkerQuality.objects.filter(campaign_id=campaign_id, qualified=True).values_list(
                "worker_id", flat=True
            )
        )
        split: dict[int, Counter] = defaultdict(Counter)
        valid: Counter = Counter()
        judgments = Judgment.objects.filter(
            round__assignment__campaign_id=campaign_id,
            round__submitted_at__isnull=False,
            round__kind="real",
            is_valid__isnull=False,
            label__isnull=False,
        ).values_list("candidate_id", "round__worker_id", "is_valid", "label__value")
        for candidate_id, worker_id, is_valid, label in judgments.iterator(chunk_size=2000):
            if worker_id in qualified:
                split[candidate_id][label] += 1
                valid[candidate_id] += bool(is_valid)
        aggregates = list(AggregatedLabel.objects.filter(candidate__campaign_id=campaign_id))
        for aggregate in aggregates:
            votes = split[aggregate.candidate_id]
            aggregate.label_votes = {value: votes[value] for value in labels}
            aggregate.valid_votes = valid[aggregate.candidate_id]
        AggregatedLabel.objects.bulk_update(
            aggregates, ["label_votes", "valid_votes"], batch_size=1000
        )


class Migration(migrations.Migration):
    dependencies = [
        ("quality", "0003_crowd_kit_estimates"),
        ("labeling", "0001_initial"),
        ("campaigns", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="aggregatedlabel",
            name="label_votes",
            field=models.JSONField(
                default=dict,
                help_text="Qualified votes per label value, every campaign label included "
                "(0 where none).",
            ),
        ),
        migrations.AddField(
            model_name="aggregatedlabel",
            name="valid_votes",
            field=models.PositiveSmallIntegerField(
                default=0, help_text="Qualified votes that judged the counterfactual valid."
            ),
        ),
        migrations.RunPython(fill_vote_split, migrations.RunPython.noop),
    ]
