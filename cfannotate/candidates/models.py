"""Candidate counterfactuals x̂ of an original, from a generator, an import or a researcher."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.functions import MD5
from django.utils import timezone

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
    # By a sanity filter or the fluency filter: metadata["dropped_by"] says which.
    FILTERED = "filtered", "Filtered out"
    SELECTED = "selected", "Selected for labeling"
    REJECTED = "rejected", "Rejected by the researcher"
    GOLD = "gold", "Gold (known labels)"


# Within an original, what a researcher reads first: what workers are shown (selected, or
# in a gold round), then the other kept edits, then `global` rewrites (kept, but too far
# from x to be counterfactuals, so never selected), then what was filtered or rejected.
SHOWN_FIRST = models.Case(
    models.When(status__in=(CandidateStatus.SELECTED, CandidateStatus.GOLD), then=0),
    models.When(status=CandidateStatus.GENERATED, control_code=ControlCode.GLOBAL, then=2),
    models.When(status=CandidateStatus.GENERATED, then=1),
    default=3,
    output_field=models.IntegerField(),
)


class CandidateQuerySet(models.QuerySet):
    """Chainable filters of the review page and the API; an empty argument filters nothing."""

    ORDERINGS = {
        # By original, each original's candidates as SHOWN_FIRST says, the most fluent
        # first within each group.
        "original": (
            "original_id",
            SHOWN_FIRST,
            models.F("fluency_full").desc(nulls_last=True),
            "id",
        ),
        "fluency": (models.F("fluency_full").desc(nulls_last=True), "id"),
        "-fluency": (models.F("fluency_full").asc(nulls_last=True), "id"),
        "created": ("created_at", "id"),
        "-created": ("-created_at", "-id"),
    }

    def by_generator(self, name: str | None):
        return self.filter(generator=name) if name else self

    def with_code(self, code: str | None):
        return self.filter(control_code=code) if code else self

    def with_status(self, status: str | None):
        return self.filter(status=status) if status else self

    def from_source(self, source: str | None):
        return self.filter(source=source) if source else self

    def fluency_between(self, low: float | None = None, high: float | None = None):
        """Fluency Δ (whole sentence) within [low, high]; unknown fluency is outside any bound."""
        queryset = self
        if low is not None:
            queryset = queryset.filter(fluency_full__gte=low)
        if high is not None:
            queryset = queryset.filter(fluency_full__lte=high)
        return queryset

    def matching(self, text: str | None):
        """Candidates whose text, or whose original's text or id, contains `text`."""
        if not text:
            return self
        return self.filter(
            Q(text__icontains=text)
            | Q(original__text__icontains=text)
            | Q(original__external_id=text)
        )

    def of_original(self, original_id: int | None):
        return self.filter(original_id=original_id) if original_id else self

    def ordered(self, key: str | None):
        return self.order_by(*self.ORDERINGS[key or "original"])


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
    # The classifier in the loop (Campaign.flip_classifier): its label for x̂ and the
    # probability it gave that label; selection weighs predicted flips by them.
    predicted_label = models.ForeignKey(
        CampaignLabel,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="The label the campaign's classifier predicts for this candidate.",
    )
    predicted_confidence = models.FloatField(
        null=True, blank=True, help_text="The classifier's probability of its predicted label."
    )
    prediction_source = models.CharField(
        max_length=20, blank=True, help_text="baseline, model or uploaded (blank: none yet)."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = CandidateQuerySet.as_manager()

    class Meta:
        ordering = ["original", "id"]
        constraints = [
            # Hashed: a btree index cannot hold a long review's full text.
            models.UniqueConstraint("original", MD5("text"), name="candidate_unique_text"),
            models.CheckConstraint(condition=~Q(text=""), name="candidate_text_not_empty"),
            models.CheckConstraint(
                condition=Q(predicted_confidence__isnull=True)
                | (Q(predicted_confidence__gte=0) & Q(predicted_confidence__lte=1)),
                name="candidate_confidence_range",
            ),
            models.CheckConstraint(
                condition=Q(predicted_label__isnull=True) | ~Q(prediction_source=""),
                name="candidate_prediction_has_source",
            ),
        ]
        indexes = [
            models.Index(fields=["campaign", "status"], name="candidate_campaign_status"),
            models.Index(fields=["original", "status"], name="candidate_original_status"),
            # A campaign's candidates by original, with every column that the reads over
            # all of them use, so that they scan this index and not the wide rows (text,
            # prompt, edit, metadata): the ids of a review page in the default order
            # (ORDERINGS["original"], sorted per original only) or by fluency, the
            # per-original counts of the generation overview and the campaign list's counts.
            models.Index(
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
        ]

    def __str__(self) -> str:
        return self.text[:80]


class RunState(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Finished with failed chunks"
    CANCELLED = "cancelled", "Cancelled"


class GenerationRun(models.Model):
    """One launch of generation for a campaign, split into chunks that workers take."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="runs")
    state = models.CharField(max_length=20, choices=RunState.choices, default=RunState.QUEUED)
    chunk_size = models.PositiveIntegerField()
    chunks_total = models.PositiveIntegerField(default=0)
    chunks_done = models.PositiveIntegerField(default=0)
    chunks_failed = models.PositiveIntegerField(default=0)
    candidates_stored = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(chunks_done__lte=models.F("chunks_total")),
                name="run_done_within_total",
            ),
            models.CheckConstraint(condition=Q(chunk_size__gte=1), name="run_chunk_size_positive"),
        ]

    def __str__(self) -> str:
        return f"generation run {self.pk} of {self.campaign}"


class ChunkState(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class GenerationChunk(models.Model):
    """A slice of a run's originals: one background task on the `generation` queue."""

    run = models.ForeignKey(GenerationRun, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    original_ids = models.JSONField(help_text="Primary keys of the originals in this chunk.")
    state = models.CharField(max_length=20, choices=ChunkState.choices, default=ChunkState.QUEUED)
    attempts = models.PositiveSmallIntegerField(default=0)
    # While running: the time after which another worker may take the chunk over
    # (its worker is presumed dead).
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True)
    candidates_stored = models.PositiveIntegerField(default=0)
    # While running: originals' worth of generation done so far (each original counts
    # once every generator of the campaign has passed over it, a part pass in proportion),
    # written by the worker about once a second for the live progress.
    originals_done = models.PositiveIntegerField(default=0)
    # What the stored candidates cannot tell: by original id, the distinct candidates
    # post-processing returned ("made"; duplicates and copies of x are never stored) and
    # the generators that skipped it, with why, e.g.
    # {"12": {"made": 0, "skipped": [{"generator": "polyjuice", "reason": "..."}]}}.
    outcomes = models.JSONField(default=dict, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [
            models.UniqueConstraint(fields=["run", "index"], name="chunk_index_unique"),
        ]
        indexes = [models.Index(fields=["state", "lease_expires_at"], name="chunk_lease")]

    def __str__(self) -> str:
        return f"chunk {self.index} of run {self.run_id}"


class ImportState(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


ACTIVE_IMPORT_STATES = (ImportState.QUEUED, ImportState.RUNNING)
# A part of an import (IMPORT_PART_ROWS rows) takes well under a minute, even with fluency.
IMPORT_STALL_SECONDS = 10 * 60


class CandidateImport(models.Model):
    """A researcher's file of candidates, annotated and stored by a background task.

    Its rows were checked when it was uploaded; the task checks them again (the campaign
    may have changed since), annotates them in parts, reporting `rows_done` after each,
    and stores them all or none. The file itself is kept only until the import ends.
    """

    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="candidate_imports"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    file_name = models.CharField(max_length=200, help_text="As the uploader's computer named it.")
    content = models.BinaryField(blank=True, help_text="The file, emptied when the import ends.")
    score_fluency = models.BooleanField(default=False)
    state = models.CharField(max_length=20, choices=ImportState.choices, default=ImportState.QUEUED)
    rows_total = models.PositiveIntegerField(default=0)
    rows_done = models.PositiveIntegerField(default=0, help_text="Rows annotated so far.")
    imported = models.PositiveIntegerField(default=0, help_text="New candidates stored.")
    kept = models.PositiveIntegerField(default=0, help_text="Of those, fluent.")
    originals = models.PositiveIntegerField(default=0, help_text="Originals they belong to.")
    error = models.TextField(blank=True)
    # Where -> what is wrong ("row 3": [...]), as an InvalidInput's fields.
    error_fields = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # The worker's last sign of life: its last progress report.
    updated_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # One import at a time per campaign: two would check their rows against
            # the same stored candidates and could both add the same text.
            models.UniqueConstraint(
                fields=["campaign"],
                condition=Q(state__in=["queued", "running"]),
                name="one_active_import_per_campaign",
            ),
            models.CheckConstraint(
                condition=Q(rows_done__lte=models.F("rows_total")),
                name="import_done_within_total",
            ),
        ]

    def __str__(self) -> str:
        return f"import {self.pk} of {self.file_name} into {self.campaign}"

    @property
    def active(self) -> bool:
        return self.state in ACTIVE_IMPORT_STATES

    @property
    def percent(self) -> int:
        return int(100 * self.rows_done / self.rows_total) if self.rows_total else 0

    @property
    def seconds_left(self) -> float | None:
        """At the pace so far; None until the first part is annotated."""
        if self.state != ImportState.RUNNING or not self.rows_done or not self.started_at:
            return None
        spent = ((self.updated_at or self.started_at) - self.started_at).total_seconds()
        return spent / self.rows_done * (self.rows_total - self.rows_done)

    @property
    def stalled(self) -> bool:
        """Running, but no progress reported for IMPORT_STALL_SECONDS: its worker may
        have stopped (the researcher can cancel it and import again)."""
        if self.state != ImportState.RUNNING or self.updated_at is None:
            return False
        return (timezone.now() - self.updated_at).total_seconds() > IMPORT_STALL_SECONDS
