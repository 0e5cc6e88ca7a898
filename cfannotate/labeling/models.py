"""Units, gold rounds, assignments, rounds and judgments (Polyjuice §4.2, Appendix C.2).

The invariants that keep paid work safe live in the database: a unit is never
claimed beyond the judgments it needs, a worker never gets the same unit or gold
round twice, and a round belongs to exactly one unit or one gold round.
"""

from django.db import models
from django.db.models import F, Q

from cfannotate.campaigns.models import Campaign, CampaignLabel, Original
from cfannotate.candidates.models import Candidate


class LabelingUnit(models.Model):
    """One original with its selected counterfactuals: what one real round shows."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="units")
    original = models.ForeignKey(Original, on_delete=models.PROTECT, related_name="units")
    judgments_needed = models.PositiveSmallIntegerField(
        help_text="K, raised when disputed candidates are re-queued."
    )
    claims = models.PositiveSmallIntegerField(
        default=0, help_text="Rounds that hold this unit: in progress or submitted."
    )
    completed = models.PositiveSmallIntegerField(default=0, help_text="Submitted rounds.")
    requeues = models.PositiveSmallIntegerField(default=0)
    priority = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "-priority", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(claims__lte=F("judgments_needed")), name="unit_claims_within_k"
            ),
            models.CheckConstraint(
                condition=Q(completed__lte=F("claims")), name="unit_completed_within_claims"
            ),
            models.CheckConstraint(
                condition=Q(judgments_needed__gte=1), name="unit_needs_judgments"
            ),
        ]
        indexes = [
            # The claiming query: open units of a campaign, best first.
            models.Index(
                F("campaign"),
                F("priority").desc(),
                F("id"),
                condition=Q(claims__lt=F("judgments_needed")),
                name="unit_open_by_priority",
            ),
        ]

    def __str__(self) -> str:
        return f"unit {self.pk} of {self.original}"


class UnitItem(models.Model):
    """A counterfactual's slot in a unit; a candidate is in at most one unit."""

    unit = models.ForeignKey(LabelingUnit, on_delete=models.CASCADE, related_name="items")
    candidate = models.OneToOneField(Candidate, on_delete=models.PROTECT, related_name="unit_item")
    position = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["unit", "position"]
        constraints = [
            models.UniqueConstraint(fields=["unit", "position"], name="unit_item_position_unique"),
        ]

    def __str__(self) -> str:
        return f"slot {self.position} of unit {self.unit_id}"


class GoldKind(models.TextChoices):
    GOLD = "gold", "Hidden gold round"
    TRAINING = "training", "Training round (feedback shown)"


class GoldRound(models.Model):
    """A round with known answers: hidden among real rounds, or shown as training."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="gold_rounds")
    original = models.ForeignKey(Original, on_delete=models.PROTECT, related_name="gold_rounds")
    kind = models.CharField(max_length=20, choices=GoldKind.choices, default=GoldKind.GOLD)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "kind", "id"]
        indexes = [models.Index(fields=["campaign", "kind", "is_active"], name="gold_pool")]

    def __str__(self) -> str:
        return f"{self.kind} round {self.pk}"


class GoldItem(models.Model):
    """One counterfactual of a gold round with its expected answers."""

    gold_round = models.ForeignKey(GoldRound, on_delete=models.CASCADE, related_name="items")
    candidate = models.OneToOneField(Candidate, on_delete=models.PROTECT, related_name="gold_item")
    position = models.PositiveSmallIntegerField()
    expected_valid = models.BooleanField(default=True)
    expected_label = models.ForeignKey(CampaignLabel, on_delete=models.PROTECT, related_name="+")
    explanation = models.TextField(blank=True, help_text="Shown after a training round.")

    class Meta:
        ordering = ["gold_round", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["gold_round", "position"], name="gold_item_position_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"item {self.position} of gold round {self.gold_round_id}"


class AssignmentState(models.TextChoices):
    ACTIVE = "active", "In progress"
    SUBMITTED = "submitted", "Submitted"
    EXPIRED = "expired", "Lease expired"
    RETURNED = "returned", "Returned by the worker"


class Assignment(models.Model):
    """One worker's batch: training, then real and hidden gold rounds."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="assignments")
    worker = models.ForeignKey("crowd.Worker", on_delete=models.PROTECT, related_name="assignments")
    # The platform's own ids: MTurk assignmentId and hitId, Prolific session and study.
    platform_assignment_id = models.CharField(max_length=200, blank=True)
    platform_task_id = models.CharField(max_length=200, blank=True)
    # Random per assignment and part of the signed worker token; rotating it revokes
    # the token.
    token_nonce = models.CharField(max_length=64, unique=True)
    state = models.CharField(
        max_length=20, choices=AssignmentState.choices, default=AssignmentState.ACTIVE
    )
    lease_expires_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    completion_code = models.CharField(max_length=64, blank=True)
    # Rounds not shown yet were withdrawn (the quality filters stopped the worker).
    ended_early = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "worker"],
                condition=Q(state="active"),
                name="assignment_one_active_per_worker",
            ),
            models.UniqueConstraint(
                fields=["campaign", "platform_assignment_id"],
                condition=~Q(platform_assignment_id=""),
                name="assignment_platform_id_unique",
            ),
            models.CheckConstraint(
                condition=Q(submitted_at__isnull=True) | Q(state="submitted"),
                name="assignment_submitted_time_only_when_submitted",
            ),
        ]
        indexes = [
            models.Index(fields=["state", "lease_expires_at"], name="assignment_lease"),
            models.Index(fields=["campaign", "state"], name="assignment_campaign_state"),
        ]

    def __str__(self) -> str:
        return f"assignment {self.pk} ({self.worker})"


class RoundKind(models.TextChoices):
    TRAINING = "training", "Training"
    REAL = "real", "Real"
    GOLD = "gold", "Gold"


class Round(models.Model):
    """One page of an assignment: an original and its counterfactuals to judge."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="rounds")
    # Denormalized from the assignment so the database can forbid repeats per worker.
    worker = models.ForeignKey("crowd.Worker", on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=20, choices=RoundKind.choices)
    position = models.PositiveSmallIntegerField(help_text="0 for training, then 1..N.")
    unit = models.ForeignKey(
        LabelingUnit, on_delete=models.PROTECT, null=True, blank=True, related_name="rounds"
    )
    gold_round = models.ForeignKey(
        GoldRound, on_delete=models.PROTECT, null=True, blank=True, related_name="rounds"
    )
    served_at = models.DateTimeField(null=True, blank=True, help_text="First shown (server).")
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["assignment", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "position"], name="round_position_unique"
            ),
            models.UniqueConstraint(
                fields=["worker", "unit"],
                condition=Q(unit__isnull=False),
                name="round_worker_sees_unit_once",
            ),
            models.UniqueConstraint(
                fields=["worker", "gold_round"],
                condition=Q(kind="gold"),
                name="round_worker_sees_gold_once",
            ),
            models.CheckConstraint(
                condition=(Q(kind="real") & Q(unit__isnull=False) & Q(gold_round__isnull=True))
                | (
                    Q(kind__in=["gold", "training"])
                    & Q(unit__isnull=True)
                    & Q(gold_round__isnull=False)
                ),
                name="round_has_one_source",
            ),
            models.CheckConstraint(
                condition=Q(submitted_at__isnull=True)
                | (Q(served_at__isnull=False) & Q(submitted_at__gte=F("served_at"))),
                name="round_submitted_after_served",
            ),
        ]

    def __str__(self) -> str:
        return f"round {self.position} of assignment {self.assignment_id}"

    @property
    def seconds_taken(self) -> float | None:
        if self.served_at is None or self.submitted_at is None:
            return None
        return (self.submitted_at - self.served_at).total_seconds()


class Judgment(models.Model):
    """A worker's answer on one counterfactual: valid or not, and its class label.

    Saved on every click (both fields start empty); final once its round is submitted.
    """

    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="judgments")
    candidate = models.ForeignKey(Candidate, on_delete=models.PROTECT, related_name="judgments")
    label = models.ForeignKey(
        CampaignLabel, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    is_valid = models.BooleanField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["round", "id"]
        constraints = [
            models.UniqueConstraint(fields=["round", "candidate"], name="judgment_once_per_round"),
        ]
        indexes = [models.Index(fields=["candidate"], name="judgment_by_candidate")]

    def __str__(self) -> str:
        return f"judgment of candidate {self.candidate_id} in round {self.round_id}"
