"""A campaign: the task definition, its settings for every stage, and its originals."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

# Selection's weights are relative to one another; beyond 100 a term only overflows.
WEIGHT_RANGE = [MinValueValidator(0.0), MaxValueValidator(100.0)]
MAX_LEASE_MINUTES = 30 * 24 * 60  # a month: an idle assignment's units come back by then


class TaskType(models.TextChoices):
    SENTIMENT = "sentiment", "Sentiment (single text)"
    NLI = "nli", "Natural language inference (hypothesis perturbed)"
    DUPLICATE_QUESTIONS = "duplicate_questions", "Duplicate questions (Q2 perturbed)"
    CAUSAL_STRENGTH = "causal_strength", "Causal strength (single text)"
    CUSTOM = "custom", "Custom labels"


class CampaignStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    GENERATING = "generating", "Generating"
    REVIEW = "review", "Reviewing candidates"
    LABELING = "labeling", "Labeling"
    PAUSED = "paused", "Paused"
    FINISHED = "finished", "Finished"


class FlipClassifier(models.TextChoices):
    """Where a candidate's predicted label comes from (`generation.label_classifiers`)."""

    NONE = "none", "None"
    BASELINE = "baseline", "Built-in baseline (trained on the originals and labeled pairs)"
    MODEL = "model", "A text-classification model directory"
    UPLOADED = "uploaded", "Predictions uploaded for the candidates"


class Campaign(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="campaigns"
    )
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    status = models.CharField(
        max_length=20, choices=CampaignStatus.choices, default=CampaignStatus.DRAFT
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # The new-campaign form it was made from: the same form sent twice (a double click, a
    # reload) finds this campaign instead of making another. Empty: made through the API.
    creation_token = models.CharField(max_length=64, blank=True, default="", editable=False)

    # The task. For pair tasks the context (premise, Q1) stays fixed and the text
    # (hypothesis, Q2) is perturbed; single-text tasks leave context_name empty.
    task_type = models.CharField(max_length=30, choices=TaskType.choices)
    text_name = models.CharField(max_length=60, default="Sentence")
    context_name = models.CharField(max_length=60, blank=True)
    instructions = models.TextField(
        blank=True, help_text="Task-specific instructions shown to workers (plain text)."
    )

    # Generation: one entry per generator, e.g. {"name": "polyjuice", "codes": [...]}.
    generators = models.JSONField(default=list, blank=True)
    candidates_per_original = models.PositiveIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(1000)],
        default=20,
        help_text="How many candidates to generate per original before selection.",
    )
    fluency_threshold = models.FloatField(
        validators=[MinValueValidator(0.0), MaxValueValidator(1000.0)],
        default=10.0,
        help_text="Drop a candidate whose log-probability falls more than this below the "
        "original's, on the whole sentence or the changed phrase (Polyjuice §3.2).",
    )
    targeting = models.JSONField(
        default=dict, blank=True, help_text="Slices and control code for targeted blanks."
    )

    # Selection (Polyjuice §4.1): weights of the relationship distance D_L.
    selected_per_original = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(50)], default=3
    )
    weight_base = models.FloatField(validators=WEIGHT_RANGE, default=1.0)
    weight_removed = models.FloatField(validators=WEIGHT_RANGE, default=1.0)
    weight_added = models.FloatField(validators=WEIGHT_RANGE, default=1.0)
    weight_tree = models.FloatField(validators=WEIGHT_RANGE, default=0.5)
    weight_code = models.FloatField(validators=WEIGHT_RANGE, default=1.0)
    # The classifier in the loop (issue #21, item 3): what predicts each candidate's label,
    # and how much selection favours predicted flips (generation/selection.md §2).
    flip_classifier = models.CharField(
        max_length=20,
        choices=FlipClassifier.choices,
        default=FlipClassifier.BASELINE,
        help_text="What predicts each candidate's label: the built-in baseline trained on "
        "the originals and every counterfactual whose label is known (gold answers, the "
        "crowd's kept labels, your own pairs), a text-classification model directory, or "
        "predictions you upload.",
    )
    flip_model = models.CharField(
        max_length=500,
        blank=True,
        help_text="The model directory (on the generation workers) when the classifier is a "
        "model directory.",
    )
    # Model label name -> campaign label value, for a model whose config.id2label says
    # LABEL_0/LABEL_1 or NEGATIVE/POSITIVE (checked by `campaigns.label_map`).
    flip_label_map = models.JSONField(
        default=dict,
        blank=True,
        verbose_name="Model label map",
        help_text="For a model directory whose labels are named otherwise than the campaign's "
        "(LABEL_0, NEGATIVE, ...): each model label and the campaign label it means.",
    )
    flip_weight = models.FloatField(
        validators=WEIGHT_RANGE,
        default=0.5,
        help_text="How much selection favours candidates predicted to change the label, "
        "against diversity; 0 selects for diversity alone.",
    )
    # Not a setting: how well the built-in baseline labeled the originals it did not learn
    # from when it last predicted ({"right", "of", "majority"}; empty: never checked),
    # written by `candidates.predictions.candidates_predict`.
    flip_classifier_check = models.JSONField(default=dict, blank=True, editable=False)

    # Labeling (Appendix C.2).
    training_rounds = models.PositiveSmallIntegerField(
        validators=[MaxValueValidator(10)], default=1
    )
    rounds_per_assignment = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(500)], default=20
    )
    gold_rounds_per_assignment = models.PositiveSmallIntegerField(
        validators=[MaxValueValidator(100)], default=2
    )
    judgments_per_candidate = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(50)],
        default=2,
        help_text="K: judgments each counterfactual needs from distinct workers.",
    )
    lease_minutes = models.PositiveIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(MAX_LEASE_MINUTES)],
        default=90,
        help_text="An assignment idle this long returns its units to the pool.",
    )
    max_requeues = models.PositiveSmallIntegerField(
        validators=[MaxValueValidator(20)],
        default=2,
        help_text="How many extra judgment rounds a disputed candidate may get.",
    )

    # Quality control (Appendix C.2).
    min_median_seconds = models.FloatField(
        validators=[MinValueValidator(0.0), MaxValueValidator(3600.0)], default=18.0
    )
    # C.2: "at least 4 gold counterfactuals (out of 6)", as a share (quality.md §1).
    min_gold_share = models.FloatField(
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        default=4 / 6,
        help_text="Share of the gold counterfactuals a worker must get right (rounded to the "
        "nearest count: 0.67 of 6 is 4); every gold right always passes.",
    )
    # With K = 2, any threshold above one half means "both agree" (C.2); after a
    # re-queue, 0.6 lets two of three votes settle a split.
    agreement_threshold = models.FloatField(
        validators=[MinValueValidator(0.01), MaxValueValidator(1.0)],
        default=0.6,
        help_text="Share of qualified votes that must agree on the class label.",
    )
    label_distribution_threshold = models.FloatField(
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        default=0.35,
        help_text="Filter out a worker whose label distribution diverges from the other "
        "workers' by more than this total-variation distance (1 turns the filter off).",
    )
    bonus_amount = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        validators=[MinValueValidator(0)],
        default=0,
        help_text="Bonus (USD) proposed for qualified workers with every gold counterfactual "
        "right; 0 proposes none.",
    )

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner", "-created_at"], name="campaign_owner_recent")]
        constraints = [
            models.CheckConstraint(
                condition=Q(selected_per_original__gte=1), name="campaign_selects_at_least_one"
            ),
            models.CheckConstraint(
                condition=Q(rounds_per_assignment__gte=1), name="campaign_has_rounds"
            ),
            models.CheckConstraint(
                condition=Q(judgments_per_candidate__gte=1), name="campaign_needs_judgments"
            ),
            models.CheckConstraint(
                condition=Q(lease_minutes__gte=1), name="campaign_lease_positive"
            ),
            models.CheckConstraint(
                condition=Q(agreement_threshold__gt=0) & Q(agreement_threshold__lte=1),
                name="campaign_agreement_threshold_range",
            ),
            models.CheckConstraint(
                condition=Q(label_distribution_threshold__gte=0)
                & Q(label_distribution_threshold__lte=1),
                name="campaign_distribution_threshold_range",
            ),
            models.CheckConstraint(
                condition=Q(bonus_amount__gte=0), name="campaign_bonus_not_negative"
            ),
            models.CheckConstraint(
                condition=Q(fluency_threshold__gte=0), name="campaign_fluency_threshold_positive"
            ),
            models.CheckConstraint(
                condition=Q(weight_base__gte=0)
                & Q(weight_removed__gte=0)
                & Q(weight_added__gte=0)
                & Q(weight_tree__gte=0)
                & Q(weight_code__gte=0),
                name="campaign_weights_non_negative",
            ),
            models.CheckConstraint(
                condition=Q(flip_weight__gte=0), name="campaign_flip_weight_non_negative"
            ),
            models.CheckConstraint(
                condition=~Q(flip_classifier="model") | ~Q(flip_model=""),
                name="campaign_flip_model_named",
            ),
            models.UniqueConstraint(
                fields=["owner", "creation_token"],
                condition=~Q(creation_token=""),
                name="campaign_creation_token_unique",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if self.flip_classifier == FlipClassifier.MODEL and not self.flip_model.strip():
            raise ValidationError(
                {"flip_model": "Name the model directory, or choose another classifier."}
            )

    @property
    def is_pair_task(self) -> bool:
        return bool(self.context_name)

    @property
    def generator_names(self) -> list[str]:
        """The generators a run uses, in order: Polyjuice alone where none are named."""
        entries = self.generators if isinstance(self.generators, list) else []
        names = [str(entry.get("name", "")) for entry in entries if isinstance(entry, dict)]
        return [name for name in names if name] or ["polyjuice"]

    @property
    def rounds_total(self) -> int:
        """Rounds after training: real plus hidden gold ("Round k of 22")."""
        return self.rounds_per_assignment + self.gold_rounds_per_assignment


# The per-stage settings a researcher may set, stage by stage, in the order they are shown
# (the settings page, the admin, the API).
SETTING_STAGES = (
    ("Generation", ("generators", "candidates_per_original", "fluency_threshold", "targeting")),
    (
        "Selection",
        (
            "selected_per_original",
            "weight_base",
            "weight_removed",
            "weight_added",
            "weight_tree",
            "weight_code",
            "flip_classifier",
            "flip_model",
            "flip_label_map",
            "flip_weight",
        ),
    ),
    (
        "Labeling",
        (
            "training_rounds",
            "rounds_per_assignment",
            "gold_rounds_per_assignment",
            "judgments_per_candidate",
            "lease_minutes",
            "max_requeues",
        ),
    ),
    (
        "Quality control",
        (
            "min_median_seconds",
            "min_gold_share",
            "agreement_threshold",
            "label_distribution_threshold",
            "bonus_amount",
        ),
    ),
)
SETTING_FIELDS = tuple(name for _, names in SETTING_STAGES for name in names)


class CampaignLabel(models.Model):
    """One class of the campaign's label set, with what workers see."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="labels")
    value = models.SlugField(max_length=60, help_text="Stored and exported value.")
    display_name = models.CharField(max_length=80)
    description = models.TextField(blank=True)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["campaign", "position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "value"], name="label_value_unique"),
            models.UniqueConstraint(
                fields=["campaign", "display_name"], name="label_display_name_unique"
            ),
        ]

    def __str__(self) -> str:
        return self.display_name


class Original(models.Model):
    """A labeled instance x from the researcher's dataset."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="originals")
    external_id = models.CharField(max_length=200, help_text="Id from the uploaded dataset.")
    text = models.TextField(help_text="The field that gets perturbed.")
    context = models.TextField(blank=True, help_text="The fixed field of a pair task.")
    label = models.ForeignKey(CampaignLabel, on_delete=models.PROTECT, related_name="originals")
    extra = models.JSONField(default=dict, blank=True, help_text="Other columns, kept as-is.")
    priority = models.FloatField(
        default=0.0, help_text="Higher is labeled first (model-in-the-loop, corpus selection)."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "external_id"], name="original_external_id_unique"
            ),
            models.CheckConstraint(condition=~Q(text=""), name="original_text_not_empty"),
        ]
        indexes = [models.Index(fields=["campaign", "-priority"], name="original_priority")]

    def __str__(self) -> str:
        return f"{self.external_id}: {self.text[:60]}"
