"""One run of Polyjuice Table 2 or Table 3 on a campaign, kept so the page can show history."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from cfannotate.campaigns.models import Campaign


class EvaluationKind(models.TextChoices):
    TABLE2 = "table2", "Contrast set (Table 2)"
    TABLE3 = "table3", "Augmentation (Table 3)"


class EvaluationSource(models.TextChoices):
    BASELINE = "baseline", "Built-in baseline (TF-IDF + logistic regression)"
    UPLOADED = "uploaded", "Uploaded predictions"


class Evaluation(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="evaluations")
    kind = models.CharField(max_length=10, choices=EvaluationKind.choices)
    source = models.CharField(max_length=10, choices=EvaluationSource.choices)
    parameters = models.JSONField(
        default=dict, blank=True, help_text="Sizes, seeds, folds and uploads the run used."
    )
    result = models.JSONField(help_text="The figures, as generation.evaluation reports them.")
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=EvaluationKind.values), name="evaluation_kind_known"
            ),
            models.CheckConstraint(
                condition=Q(source__in=EvaluationSource.values), name="evaluation_source_known"
            ),
            # Table 3 trains models; only Table 2 can score someone else's predictions.
            models.CheckConstraint(
                condition=~Q(kind=EvaluationKind.TABLE3) | Q(source=EvaluationSource.BASELINE),
                name="evaluation_table3_trains_the_baseline",
            ),
        ]
        indexes = [
            models.Index(fields=["campaign", "kind", "-created_at"], name="evaluation_recent")
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} of {self.campaign} ({self.created_at:%Y-%m-%d %H:%M})"
