"""The label a counterfactual keeps after worker filtering and the vote (Appendix C.2)."""

from django.db import models
from django.db.models import Q

from cfannotate.campaigns.models import CampaignLabel
from cfannotate.candidates.models import Candidate


class AggregationMethod(models.TextChoices):
    MAJORITY = "majority", "Majority vote of qualified workers"
    DAWID_SKENE = "dawid_skene", "Dawid-Skene estimate"


class AggregatedLabel(models.Model):
    candidate = models.OneToOneField(
        Candidate, on_delete=models.CASCADE, related_name="aggregated_label"
    )
    method = models.CharField(
        max_length=20, choices=AggregationMethod.choices, default=AggregationMethod.MAJORITY
    )
    label = models.ForeignKey(
        CampaignLabel, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    is_valid = models.BooleanField(
        help_text="At least one qualified worker judged the counterfactual valid."
    )
    kept = models.BooleanField(help_text="Valid, and the qualified workers agree on the label.")
    votes = models.PositiveSmallIntegerField(help_text="Submitted judgments.")
    qualified_votes = models.PositiveSmallIntegerField(help_text="From workers who passed QC.")
    agreement = models.FloatField(help_text="Share of qualified votes on the winning label.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["candidate"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kept=False) | (Q(label__isnull=False) & Q(is_valid=True)),
                name="aggregate_kept_has_valid_label",
            ),
            models.CheckConstraint(
                condition=Q(qualified_votes__lte=models.F("votes")),
                name="aggregate_qualified_within_votes",
            ),
            models.CheckConstraint(
                condition=Q(agreement__gte=0) & Q(agreement__lte=1),
                name="aggregate_agreement_range",
            ),
        ]
        indexes = [models.Index(fields=["kept"], name="aggregate_kept")]

    def __str__(self) -> str:
        return f"aggregate of candidate {self.candidate_id}"
