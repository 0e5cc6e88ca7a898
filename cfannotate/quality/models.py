"""Quality control (Polyjuice Appendix C.2): worker verdicts, kept labels, worker decisions."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from cfannotate.campaigns.models import Campaign, CampaignLabel
from cfannotate.candidates.models import Candidate
from cfannotate.crowd.models import Worker
from cfannotate.labeling.models import Assignment


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
    label_votes = models.JSONField(
        default=dict,
        help_text="Qualified votes per label value, every campaign label included (0 where none).",
    )
    valid_votes = models.PositiveSmallIntegerField(
        default=0, help_text="Qualified votes that judged the counterfactual valid."
    )
    agreement = models.FloatField(help_text="Share of qualified votes on the winning label.")
    needs_more = models.BooleanField(
        default=False,
        help_text="Fewer than K qualified votes, or valid without agreement: worth re-queuing.",
    )
    # Estimates over the qualified votes (crowd-kit, `estimates.py`), beside the vote when K > 2.
    ds_label = models.ForeignKey(
        CampaignLabel, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    ds_confidence = models.FloatField(null=True, blank=True)
    glad_label = models.ForeignKey(
        CampaignLabel,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="GLAD's estimate (worker skill and item difficulty), where K > 2.",
    )
    mace_label = models.ForeignKey(
        CampaignLabel,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="MACE's estimate (workers who sometimes answer at random), where K > 2.",
    )
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


class WorkerQuality(models.Model):
    """A worker's standing in one campaign: the C.2 filter and the label-distribution filter."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="qualities")
    qualified = models.BooleanField()
    reasons = models.JSONField(default=list, blank=True, help_text="Why not qualified.")
    settled = models.BooleanField(
        default=False, help_text="No assignment in progress: the verdict will not change."
    )
    rounds = models.PositiveIntegerField(help_text="Submitted real and gold rounds.")
    median_seconds = models.FloatField(null=True, blank=True)
    gold_correct = models.PositiveIntegerField(default=0)
    gold_total = models.PositiveIntegerField(default=0)
    label_counts = models.JSONField(default=dict, blank=True)
    distribution_distance = models.FloatField(null=True, blank=True)
    held_until = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text=(
            "Short of the gold share alone before the gold sample is answered: the worker "
            "keeps working, their votes wait until this many gold are answered."
        ),
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["campaign", "worker"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "worker"], name="quality_once_per_worker"),
            models.CheckConstraint(
                condition=Q(gold_correct__lte=models.F("gold_total")),
                name="quality_gold_correct_within_total",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.worker} in campaign {self.campaign_id}"

    @property
    def gold_accuracy(self) -> float | None:
        return self.gold_correct / self.gold_total if self.gold_total else None


class DecisionAction(models.TextChoices):
    APPROVE = "approve", "Approve"
    REJECT = "reject", "Reject"
    BONUS = "bonus", "Bonus"
    BLOCK = "block", "Block"


class DecisionState(models.TextChoices):
    PROPOSED = "proposed", "Proposed by the filters"
    CONFIRMED = "confirmed", "Confirmed, to be sent"
    SENDING = "sending", "Being sent to the platform"
    APPLIED = "applied", "Sent to the platform"
    FAILED = "failed", "The platform refused"
    DISMISSED = "dismissed", "Dismissed"


PAYMENT_ACTIONS = [DecisionAction.APPROVE, DecisionAction.REJECT]


class WorkerDecision(models.Model):
    """Approve, reject, bonus or block: proposed from the filters, decided by the researcher.

    Approve/reject and bonus are about one assignment, block about the worker. Applied
    decisions go to the worker's crowd platform through `cfannotate.crowd.review`.
    """

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="decisions")
    worker = models.ForeignKey(Worker, on_delete=models.PROTECT, related_name="decisions")
    assignment = models.ForeignKey(
        Assignment, on_delete=models.PROTECT, null=True, blank=True, related_name="decisions"
    )
    action = models.CharField(max_length=20, choices=DecisionAction.choices)
    amount = models.DecimalField(
        max_digits=8, decimal_places=2, null=True, blank=True, help_text="Bonus, in USD."
    )
    reason = models.TextField(help_text="Shown to the researcher; sent as feedback.")
    state = models.CharField(
        max_length=20, choices=DecisionState.choices, default=DecisionState.PROPOSED
    )
    # False once a researcher has changed it: the filters then leave it alone.
    proposed_by_filters = models.BooleanField(default=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    error = models.TextField(blank=True, help_text="The platform's answer when it failed.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["campaign", "worker", "action", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["assignment"],
                condition=Q(action__in=PAYMENT_ACTIONS),
                name="decision_one_payment_per_assignment",
            ),
            models.UniqueConstraint(
                fields=["assignment"],
                condition=Q(action=DecisionAction.BONUS),
                name="decision_one_bonus_per_assignment",
            ),
            models.UniqueConstraint(
                fields=["campaign", "worker"],
                condition=Q(action=DecisionAction.BLOCK),
                name="decision_one_block_per_worker",
            ),
            models.CheckConstraint(
                condition=Q(action=DecisionAction.BLOCK) | Q(assignment__isnull=False),
                name="decision_assignment_unless_block",
            ),
            models.CheckConstraint(
                condition=~Q(action=DecisionAction.BONUS) | Q(amount__gt=0),
                name="decision_bonus_has_amount",
            ),
            models.CheckConstraint(
                condition=~Q(state=DecisionState.APPLIED) | Q(applied_at__isnull=False),
                name="decision_applied_has_time",
            ),
        ]
        indexes = [models.Index(fields=["campaign", "state"], name="decision_campaign_state")]

    def __str__(self) -> str:
        return f"{self.action} {self.worker} ({self.state})"
