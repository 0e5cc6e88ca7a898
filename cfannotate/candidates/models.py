"""Candidate counterfactuals x̂ of an original, from a generator, an import or a researcher."""

from django.db import models
from django.db.models import Q
from django.db.models.functions import MD5

from cfannotate.campaigns.models import Campaign, CampaignLabel, Original


class ControlCode(models.TextChoices):
    """The eight control codes of Polyjuice Table 1."""

    NEGATION = "negation", "negation"
    QUANTIFIER = "quantifier", "quantifier"
    SHUFFLE = "shuffle", "shuffle"
    LEXICAL = "lexical", "lexical"
    RESEMANTIC = "resemantic", "resemantic"
    INSERT = "insert", "insert"
    DELETE = "delete", "delete"
    RESTRUCTURE = "restructure", "restructure"
    # Appendix A.2: a change no code describes, or too large to be a counterfactual.
    GLOBAL = "global", "global"


class CandidateSource(models.TextChoices):
    GENERATED = "generated", "Generated"
    IMPORTED = "imported", "Imported"
    AUTHORED = "authored", "Authored by the researcher"


class CandidateStatus(models.TextChoices):
    GENERATED = "generated", "Generated"
    FILTERED = "filtered", "Filtered out (fluency)"
    SELECTED = "selected", "Selected for labeling"
    REJECTED = "rejected", "Rejected by the researcher"
    GOLD = "gold", "Gold (known labels)"


class Candidate(models.Model):
    # Denormalized from original.campaign for the per-campaign queries of every stage.
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="candidates")
    original = models.ForeignKey(Original, on_delete=models.CASCADE, related_name="candidates")
    text = models.TextField()
    source = models.CharField(
        max_length=20, choices=CandidateSource.choices, default=CandidateSource.GENERATED
    )
    generator = models.CharField(max_length=60, help_text="Registry name of what made it.")
    control_code = models.CharField(max_length=20, choices=ControlCode.choices, blank=True)
    intended_label = models.ForeignKey(
        CampaignLabel,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="The label the generator aimed for, where the method has one.",
    )
    prompt = models.TextField(blank=True, help_text="The blanked prompt it was generated from.")
    # r(x̂) of Polyjuice §4.1: tokens removed and added, the affected subtree, the code.
    edit = models.JSONField(default=dict, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    fluency_full = models.FloatField(
        null=True, blank=True, help_text="log p(x̂) - log p(x) on the whole sentence."
    )
    fluency_changed = models.FloatField(
        null=True, blank=True, help_text="log p(x̂) - log p(x) on the changed phrase."
    )
    status = models.CharField(
        max_length=20, choices=CandidateStatus.choices, default=CandidateStatus.GENERATED
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["original", "id"]
        constraints = [
            # Hashed: a btree index cannot hold a long review's full text.
            models.UniqueConstraint("original", MD5("text"), name="candidate_unique_text"),
            models.CheckConstraint(condition=~Q(text=""), name="candidate_text_not_empty"),
        ]
        indexes = [
            models.Index(fields=["campaign", "status"], name="candidate_campaign_status"),
            models.Index(fields=["original", "status"], name="candidate_original_status"),
        ]

    def __str__(self) -> str:
        return self.text[:80]
