"""Crowdworkers, known by their platform and that platform's id for them."""

from django.db import models
from django.db.models import Q


class Platform(models.TextChoices):
    MTURK = "mturk", "Amazon Mechanical Turk"
    PROLIFIC = "prolific", "Prolific"
    LINK = "link", "Invitation link"


class WorkerStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    BLOCKED = "blocked", "Blocked"


class Worker(models.Model):
    platform = models.CharField(max_length=20, choices=Platform.choices)
    external_id = models.CharField(max_length=200, help_text="The platform's worker id.")
    status = models.CharField(
        max_length=20, choices=WorkerStatus.choices, default=WorkerStatus.ACTIVE
    )
    blocked_reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["platform", "external_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["platform", "external_id"], name="worker_platform_id_unique"
            ),
            models.CheckConstraint(condition=~Q(external_id=""), name="worker_id_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.platform}:{self.external_id}"
