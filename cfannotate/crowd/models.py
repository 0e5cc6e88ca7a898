"""Crowdworkers and the platforms they come from: publications, invitation links, the action log.

A worker is known by their platform and that platform's id for them. An administrator's
block (`Worker.status`) keeps a worker out of the whole site; a researcher's block
(`WorkerBlock`) keeps them out of that researcher's campaigns, or of one. A campaign is
*published* on MTurk (a HIT type and its HITs) or Prolific (a study), or handed out
through invitation links. Every call cfannotate makes to a platform on a worker's
behalf (approve, reject, bonus, block) is a `PlatformAction` row, written before the
call and finished after it, so a crash in between is visible and a bonus is never
paid twice for one request token.
"""

from django.conf import settings
from django.db import models
from django.db.models import F, Q


class Platform(models.TextChoices):
    MTURK = "mturk", "Amazon Mechanical Turk"
    PROLIFIC = "prolific", "Prolific"
    LINK = "link", "Invitation link"


class WorkerStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    BLOCKED = "blocked", "Blocked everywhere (administrator)"


class BlockScope(models.TextChoices):
    """Where a block keeps a worker out. Only an administrator blocks everywhere."""

    EVERYWHERE = "everywhere", "Everywhere (administrator)"
    RESEARCHER = "researcher", "All campaigns of the researcher"
    CAMPAIGN = "campaign", "One campaign"


class Worker(models.Model):
    platform = models.CharField(max_length=20, choices=Platform.choices)
    external_id = models.CharField(max_length=200, help_text="The platform's worker id.")
    # An administrator's block: every researcher's campaigns, and the platform's own block.
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


class Publication(models.Model):
    """A campaign offered on a paid platform: an MTurk HIT type and its HITs, or a Prolific study.

    Workers enter through the publication's signed entry URL, so the platform's URL
    parameters are always read against a publication we created.
    """

    campaign = models.ForeignKey(
        "campaigns.Campaign", on_delete=models.PROTECT, related_name="publications"
    )
    platform = models.CharField(max_length=20, choices=Platform.choices)
    sandbox = models.BooleanField(
        default=False, help_text="MTurk only: the requester sandbox, where nobody is paid."
    )
    external_id = models.CharField(
        max_length=200, blank=True, help_text="MTurk HIT type id or Prolific study id."
    )
    completion_code = models.CharField(
        max_length=64, blank=True, help_text="Prolific only: the code that marks a completion."
    )
    status = models.CharField(max_length=40, blank=True, help_text="The platform's own word.")
    options = models.JSONField(default=dict, help_text="What the researcher asked for.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    synced_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(platform__in=[Platform.MTURK, Platform.PROLIFIC]),
                name="publication_paid_platform",
            ),
            models.CheckConstraint(
                condition=Q(sandbox=False) | Q(platform=Platform.MTURK),
                name="publication_sandbox_is_mturk",
            ),
            models.UniqueConstraint(
                fields=["platform", "sandbox", "external_id"],
                condition=~Q(external_id=""),
                name="publication_external_id_unique",
            ),
        ]

    def __str__(self) -> str:
        where = f"{self.platform}{' sandbox' if self.sandbox else ''}"
        return f"{where} {self.external_id or '(not created)'} of campaign {self.campaign_id}"


class MTurkHit(models.Model):
    """One HIT of an MTurk publication, with the counts MTurk last reported."""

    publication = models.ForeignKey(Publication, on_delete=models.CASCADE, related_name="hits")
    hit_id = models.CharField(max_length=64, unique=True)
    max_assignments = models.PositiveIntegerField()
    status = models.CharField(max_length=20, blank=True)
    assignments_available = models.PositiveIntegerField(default=0)
    assignments_pending = models.PositiveIntegerField(default=0)
    assignments_completed = models.PositiveIntegerField(default=0)
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    synced_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["publication", "id"]
        verbose_name = "MTurk HIT"
        constraints = [
            models.CheckConstraint(
                condition=Q(max_assignments__gte=1), name="mturk_hit_has_assignments"
            ),
        ]

    def __str__(self) -> str:
        return f"HIT {self.hit_id}"


class InvitationLink(models.Model):
    """A link for in-house annotators; `quota` caps the assignments started through it."""

    campaign = models.ForeignKey(
        "campaigns.Campaign", on_delete=models.CASCADE, related_name="invitation_links"
    )
    name = models.CharField(max_length=120)
    quota = models.PositiveIntegerField(
        null=True, blank=True, help_text="Assignments this link may start; empty for no limit."
    )
    uses = models.PositiveIntegerField(default=0, help_text="Assignments started through it.")
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(quota__isnull=True) | Q(quota__gte=1), name="link_quota_positive"
            ),
            models.CheckConstraint(
                condition=Q(quota__isnull=True) | Q(uses__lte=F("quota")),
                name="link_uses_within_quota",
            ),
        ]

    def __str__(self) -> str:
        return f"link {self.name!r} of campaign {self.campaign_id}"

    @property
    def remaining(self) -> int | None:
        return None if self.quota is None else max(self.quota - self.uses, 0)


class PersonalLink(models.Model):
    """A link for one named worker of one campaign: signed, valid until `expires_at`, revocable.

    Its token (`tokens.personal_link_token`) names the link and the worker; revoking the
    link here makes the token worthless, however well it is signed.
    """

    campaign = models.ForeignKey(
        "campaigns.Campaign", on_delete=models.CASCADE, related_name="personal_links"
    )
    worker = models.ForeignKey(Worker, on_delete=models.PROTECT, related_name="personal_links")
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "-created_at"]
        constraints = [
            # A new link for the same worker replaces the old one (revoked first).
            models.UniqueConstraint(
                fields=["campaign", "worker"],
                condition=Q(revoked_at__isnull=True),
                name="personal_link_one_live_per_worker",
            ),
            models.CheckConstraint(
                condition=Q(expires_at__gt=F("created_at")), name="personal_link_expires_later"
            ),
        ]

    def __str__(self) -> str:
        return f"personal link of {self.worker} for campaign {self.campaign_id}"


class WorkerBlock(models.Model):
    """A researcher's block: no new work in their campaigns (`researcher` scope) or in one.

    Recorded here only: MTurk's and Prolific's own blocks cover every researcher who
    publishes through this site, so only an administrator's block (`Worker.status`) is
    sent to the platform.
    """

    worker = models.ForeignKey(Worker, on_delete=models.PROTECT, related_name="blocks")
    scope = models.CharField(
        max_length=20,
        choices=[
            (BlockScope.RESEARCHER, BlockScope.RESEARCHER.label),
            (BlockScope.CAMPAIGN, BlockScope.CAMPAIGN.label),
        ],
    )
    researcher = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="worker_blocks",
        help_text="Whose campaigns the worker is kept out of (a campaign's owner).",
    )
    campaign = models.ForeignKey(
        "campaigns.Campaign",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="worker_blocks",
        help_text="Campaign scope only: the one campaign.",
    )
    reason = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(scope=BlockScope.RESEARCHER) & Q(campaign__isnull=True))
                | (Q(scope=BlockScope.CAMPAIGN) & Q(campaign__isnull=False)),
                name="worker_block_scope_matches_campaign",
            ),
            models.UniqueConstraint(
                fields=["worker", "researcher"],
                condition=Q(scope=BlockScope.RESEARCHER),
                name="worker_block_once_per_researcher",
            ),
            models.UniqueConstraint(
                fields=["worker", "campaign"],
                condition=Q(scope=BlockScope.CAMPAIGN),
                name="worker_block_once_per_campaign",
            ),
        ]

    def __str__(self) -> str:
        where = f"campaign {self.campaign_id}" if self.campaign_id else "researcher's campaigns"
        return f"{self.worker} blocked from {where}"


class ReviewDecision(models.TextChoices):
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"


class AssignmentReview(models.Model):
    """The decision on an assignment as the platform holds it (ours, or synced from it)."""

    assignment = models.OneToOneField(
        "labeling.Assignment", on_delete=models.CASCADE, related_name="review"
    )
    decision = models.CharField(max_length=20, choices=ReviewDecision.choices)
    feedback = models.TextField(blank=True)
    decided_at = models.DateTimeField()

    class Meta:
        ordering = ["-decided_at"]

    def __str__(self) -> str:
        return f"{self.decision} assignment {self.assignment_id}"


class ActionKind(models.TextChoices):
    PUBLISH = "publish", "Publish"
    APPROVE = "approve", "Approve"
    REJECT = "reject", "Reject"
    BONUS = "bonus", "Bonus"
    BLOCK = "block", "Block"
    SYNC = "sync", "Sync status"
    PLACES = "places", "Add places"


class ActionOutcome(models.TextChoices):
    PENDING = "pending", "Sent, no answer yet"
    SUCCEEDED = "succeeded", "Done by the platform"
    FAILED = "failed", "Refused, unreachable or not verified"
    LOCAL = "local", "Recorded here only (no platform)"


class PlatformAction(models.Model):
    """One action cfannotate took on a platform, written before the call and finished after."""

    platform = models.CharField(max_length=20, choices=Platform.choices)
    action = models.CharField(max_length=20, choices=ActionKind.choices)
    campaign = models.ForeignKey(
        "campaigns.Campaign",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="platform_actions",
    )
    publication = models.ForeignKey(
        Publication, on_delete=models.PROTECT, null=True, blank=True, related_name="actions"
    )
    assignment = models.ForeignKey(
        "labeling.Assignment",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="platform_actions",
    )
    worker = models.ForeignKey(
        Worker, on_delete=models.PROTECT, null=True, blank=True, related_name="platform_actions"
    )
    request_token = models.CharField(
        max_length=64, blank=True, help_text="Idempotency key (bonus UniqueRequestToken)."
    )
    request_id = models.CharField(max_length=200, blank=True, help_text="The platform's id.")
    amount = models.DecimalField(max_digits=8, decimal_places=2, null=True, blank=True)
    message = models.TextField(blank=True, help_text="Feedback or reason sent along.")
    outcome = models.CharField(
        max_length=20, choices=ActionOutcome.choices, default=ActionOutcome.PENDING
    )
    response = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # A request token pays at most once: one pending or finished action per token.
            models.UniqueConstraint(
                fields=["platform", "action", "request_token"],
                condition=~Q(request_token="") & ~Q(outcome="failed"),
                name="platform_action_token_once",
            ),
            models.CheckConstraint(
                condition=~Q(action="bonus") | Q(amount__gt=0),
                name="platform_action_bonus_positive",
            ),
            models.CheckConstraint(
                condition=(Q(outcome="pending") & Q(finished_at__isnull=True))
                | (~Q(outcome="pending") & Q(finished_at__isnull=False)),
                name="platform_action_finished_when_answered",
            ),
        ]
        indexes = [
            models.Index(fields=["campaign", "-created_at"], name="platform_action_campaign"),
        ]

    def __str__(self) -> str:
        return f"{self.action} on {self.platform} ({self.outcome})"
