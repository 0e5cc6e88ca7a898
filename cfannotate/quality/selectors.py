"""Reads of quality control: the campaign's agreement, each worker's standing, the plots' data."""

import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field, fields
from datetime import datetime

from django.core.cache import cache
from django.db.models import Count, F, Max, Q, Sum

from cfannotate.campaigns.models import Campaign, FlipClassifier
from cfannotate.candidates.models import CandidateSource
from cfannotate.core.text import counted
from cfannotate.labeling.models import GoldRound, Judgment, LabelingUnit, Round, RoundKind
from cfannotate.labeling.selectors import GoldCoverage, gold_coverage
from cfannotate.quality.agreement import Agreement, Basis, agreement
from cfannotate.quality.models import (
    AggregatedLabel,
    DecisionState,
    WorkerDecision,
    WorkerQuality,
)
from cfannotate.quality.rules import reason_rule


@dataclass(frozen=True)
class QualitySummary:
    workers: int
    qualified: int
    filtered: int
    on_hold: int  # short of the gold share before the gold sample: still working
    unsettled: int
    judgments: int
    candidates_voted: int
    kept: int
    discarded: int  # every qualified vote said invalid
    needs_more: int
    extra_judgments: int  # added by re-queues
    has_gold: bool


@dataclass(frozen=True)
class WorkerRow:
    quality: WorkerQuality
    label_shares: list[tuple[str, float]]


@dataclass(frozen=True)
class QualityReport:
    summary: QualitySummary
    label_agreement: Agreement  # every submitted judgment
    label_agreement_qualified: Agreement  # qualified workers only: what the vote sees
    validity_agreement: Agreement
    workers: list[WorkerRow]
    round_seconds: list[float]  # every submitted real or gold round
    campaign_label_shares: list[tuple[str, float]]
    gold_coverage: GoldCoverage
    effects: "FilterEffects"
    # Real-round labels by round position (1..N): does a crowd drift as an assignment goes on?
    position_label_counts: list[tuple[int, dict[str, int]]] = field(default_factory=list)
    # The classifier in the loop against the crowd's kept labels, per prediction source.
    classifier: list["ClassifierCheck"] = field(default_factory=list)

    @property
    def agreements(self) -> list[tuple[str, Agreement]]:
        """The agreement rows of the page, each with what it is on."""
        return [
            ("Class label, all workers", self.label_agreement),
            ("Class label, qualified workers", self.label_agreement_qualified),
            ("Validity, all workers", self.validity_agreement),
        ]


def _shares(counts: dict[str, int], labels: list[str]) -> list[tuple[str, float]]:
    total = sum(counts.values())
    return [(label, counts.get(label, 0) / total if total else 0.0) for label in labels]


def _agreements(campaign: Campaign, qualified: set[int]) -> tuple[Agreement, ...]:
    """Agreement over every submitted real-round judgment: all workers, qualified workers,
    validity. Reads every judgment: pages use `agreements`, which keeps the figures."""
    rows = (
        Judgment.objects.filter(
            round__assignment__campaign=campaign,
            round__kind=RoundKind.REAL,
            round__submitted_at__isnull=False,
            label__isnull=False,
            is_valid__isnull=False,
        )
        .order_by("candidate_id", "round__submitted_at", "id")
        .values_list("candidate_id", "round__worker_id", "label__value", "is_valid")
    )
    labels: dict[int, list[str]] = defaultdict(list)
    labels_qualified: dict[int, list[str]] = defaultdict(list)
    validity: dict[int, list[str]] = defaultdict(list)
    for candidate_id, worker_id, label, is_valid in rows:
        labels[candidate_id].append(label)
        validity[candidate_id].append("valid" if is_valid else "invalid")
        if worker_id in qualified:
            labels_qualified[candidate_id].append(label)
    return (
        agreement(list(labels.values())),
        agreement(list(labels_qualified.values())),
        agreement(list(validity.values())),
    )


# What a stored result depends on besides the data: its classes' fields, so a release that
# changes them never reads an older shape back.
AGREEMENT_SHAPE = tuple(f.name for f in fields(Agreement)) + tuple(f.name for f in fields(Basis))


def agreements(
    campaign: Campaign, *, qualified: set[int], labels_updated_at: datetime | None, voted: int
) -> tuple[Agreement, ...]:
    """`_agreements`, computed once per state of the labels and reused until they change.

    The figures change with the judgments and the verdicts, and quality control writes
    the labels (`AggregatedLabel.updated_at`, the stamp the exports show) on every pass
    that takes either in: after each assignment, on the sweep while labeling, on a
    refresh. So the figures are kept in the shared cache under that stamp, the number
    of labels, the qualified workers and the campaign's `updated_at` (an admin edit of
    its labels), and a page load reads them back instead of every judgment (a second
    or so for 30,000). Between two passes a page shows the figures of the last one
    (computed by a refresh, or by the first load after it), as it shows that pass's
    kept labels and verdicts.
    """
    qualified_ids = ",".join(str(worker_id) for worker_id in sorted(qualified))
    basis = (
        AGREEMENT_SHAPE,
        campaign.updated_at,
        labels_updated_at,
        voted,
        hashlib.sha256(qualified_ids.encode()).hexdigest(),
    )
    key = f"quality-agreements:{campaign.id}"
    stored = cache.get(key)
    if stored is not None and stored[0] == basis:
        return stored[1]
    figures = _agreements(campaign, qualified)
    cache.set(key, (basis, figures), timeout=None)  # one entry per campaign, replaced
    return figures


def agreements_refresh(campaign: Campaign) -> tuple[Agreement, ...]:
    """Compute and keep the figures for the labels as they are now (after a quality pass,
    so the next page load reuses them)."""
    qualified = set(
        WorkerQuality.objects.filter(campaign=campaign, qualified=True).values_list(
            "worker_id", flat=True
        )
    )
    labels = AggregatedLabel.objects.filter(candidate__campaign=campaign).aggregate(
        voted=Count("id"), last_updated=Max("updated_at")
    )
    return agreements(
        campaign,
        qualified=qualified,
        labels_updated_at=labels["last_updated"],
        voted=labels["voted"],
    )


def position_label_counts(campaign: Campaign) -> list[tuple[int, dict[str, int]]]:
    """Submitted real-round labels counted by round position, in position order."""
    counts: dict[int, dict[str, int]] = defaultdict(dict)
    rows = (
        Judgment.objects.filter(
            round__assignment__campaign=campaign,
            round__kind=RoundKind.REAL,
            round__submitted_at__isnull=False,
            label__isnull=False,
        )
        .values_list("round__position", "label__value")
        .annotate(n=Count("id"))
        .order_by()
    )
    for position, label, n in rows:
        counts[position][label] = counts[position].get(label, 0) + n
    return sorted(counts.items())


def quality_report(campaign: Campaign) -> QualityReport:
    label_values = list(campaign.labels.order_by("position", "id").values_list("value", flat=True))
    qualities = list(workers_listed(campaign))
    qualified = {quality.worker_id for quality in qualities if quality.qualified}
    aggregates = AggregatedLabel.objects.filter(candidate__campaign=campaign).aggregate(
        voted=Count("id"),
        kept=Count("id", filter=Q(kept=True)),
        discarded=Count("id", filter=Q(is_valid=False, qualified_votes__gt=0)),
        needs_more=Count("id", filter=Q(needs_more=True)),
        last_updated=Max("updated_at"),
    )
    seconds = [
        (submitted - served).total_seconds()
        for served, submitted in Round.objects.filter(
            assignment__campaign=campaign, submitted_at__isnull=False
        )
        .exclude(kind=RoundKind.TRAINING)
        .values_list("served_at", "submitted_at")
    ]
    everyone: Counter = Counter()
    for quality in qualities:
        everyone.update(quality.label_counts)
    label_agreement, label_agreement_qualified, validity_agreement = agreements(
        campaign,
        qualified=qualified,
        labels_updated_at=aggregates["last_updated"],
        voted=aggregates["voted"],
    )
    summary = QualitySummary(
        workers=len(qualities),
        qualified=len(qualified),
        filtered=sum(
            1 for quality in qualities if not quality.qualified and quality.held_until is None
        ),
        on_hold=sum(1 for quality in qualities if quality.held_until is not None),
        unsettled=sum(1 for quality in qualities if not quality.settled),
        judgments=Judgment.objects.filter(
            round__assignment__campaign=campaign, round__submitted_at__isnull=False
        )
        .exclude(round__kind=RoundKind.TRAINING)
        .count(),
        candidates_voted=aggregates["voted"],
        kept=aggregates["kept"],
        discarded=aggregates["discarded"],
        needs_more=aggregates["needs_more"],
        extra_judgments=LabelingUnit.objects.filter(campaign=campaign).aggregate(n=Sum("requeues"))[
            "n"
        ]
        or 0,
        has_gold=GoldRound.objects.filter(campaign=campaign, kind="gold", is_active=True).exists(),
    )
    return QualityReport(
        summary=summary,
        label_agreement=label_agreement,
        label_agreement_qualified=label_agreement_qualified,
        validity_agreement=validity_agreement,
        workers=[
            WorkerRow(
                quality=quality,
                label_shares=_shares(quality.label_counts, label_values),
            )
            for quality in qualities
        ],
        round_seconds=seconds,
        campaign_label_shares=_shares(dict(everyone), label_values),
        gold_coverage=gold_coverage(campaign),
        effects=filter_effects(campaign),
        position_label_counts=position_label_counts(campaign),
        classifier=classifier_checks(campaign),
    )


def decisions_for(
    campaign: Campaign, *, state: str | None = None, action: str = "", search: str = ""
):
    """The campaign's decisions in one `state` and of one `action` (any when empty), of the
    workers whose id contains `search`: by state, then worker."""
    decisions = WorkerDecision.objects.filter(campaign=campaign).select_related(
        "worker", "assignment"
    )
    if state:
        decisions = decisions.filter(state=state)
    if action:
        decisions = decisions.filter(action=action)
    if search:
        decisions = decisions.filter(worker__external_id__icontains=search)
    return decisions.order_by("state", "worker__external_id", "action", "id")


def decision_state_counts(campaign: Campaign) -> dict[str, int]:
    """How many of the campaign's decisions are in each state, in the states' order (all
    of them, 0 where none is)."""
    counts = dict(
        WorkerDecision.objects.filter(campaign=campaign)
        .order_by()
        .values_list("state")
        .annotate(n=Count("id"))
    )
    return {state: counts.get(state, 0) for state in DecisionState.values}


# The worker table's verdicts (its filter): the report's words for them.
VERDICT_FILTERS = {
    "filtered": Q(qualified=False, held_until__isnull=True),
    "on_hold": Q(held_until__isnull=False),
    "kept": Q(qualified=True),
    "working": Q(settled=False),
}


def workers_listed(campaign: Campaign, *, verdict: str = "", search: str = ""):
    """The campaign's workers with their standing, of one verdict of `VERDICT_FILTERS` (any
    when empty), whose id contains `search`: filtered ones first, then the furthest label
    distributions, then by id (a total order, for pages)."""
    qualities = WorkerQuality.objects.filter(campaign=campaign).select_related("worker")
    if verdict:
        qualities = qualities.filter(VERDICT_FILTERS[verdict])
    if search:
        qualities = qualities.filter(worker__external_id__icontains=search)
    return qualities.order_by(
        "qualified", F("distribution_distance").desc(nulls_last=True), "worker__external_id", "id"
    )


def worker_rows(campaign: Campaign, qualities) -> list[WorkerRow]:
    """The worker table's rows for `qualities` (a page of them): each with its label shares
    in the campaign's label order."""
    labels = list(campaign.labels.order_by("position", "id").values_list("value", flat=True))
    return [WorkerRow(quality=q, label_shares=_shares(q.label_counts, labels)) for q in qualities]


LABEL_STATES = ("kept", "discarded", "needs_more")


def kept_labels_for(campaign: Campaign, *, state: str | None = None):
    """Each voted counterfactual with its kept label, votes and agreement, by id.

    `state`: "kept" (a label was kept), "needs_more" (waiting for votes), "discarded"
    (decided without a label: invalid, or votes that never agreed within the cap).
    """
    labels = AggregatedLabel.objects.filter(candidate__campaign=campaign).select_related(
        "candidate__original", "label", "ds_label", "glad_label", "mace_label"
    )
    if state == "kept":
        labels = labels.filter(kept=True)
    elif state == "needs_more":
        labels = labels.filter(needs_more=True)
    elif state == "discarded":
        labels = labels.filter(kept=False, needs_more=False)
    return labels.order_by("candidate_id")


# A worker this right on gold looks careful; if one rule alone removed them, its setting
# may be stricter than this crowd needs.
CAREFUL_GOLD_ACCURACY = 0.8
RULE_SETTINGS = {
    "time": ("Min median seconds", "min_median_seconds"),
    "gold": ("Min gold share", "min_gold_share"),
    "distribution": ("Label distribution threshold", "label_distribution_threshold"),
}


@dataclass(frozen=True)
class RuleEffect:
    rule: str  # "time", "gold", "distribution"
    setting: str  # its name on the settings page
    workers: int  # removed by this rule (maybe with others)
    alone: int  # removed by this rule and no other
    careful_alone: int  # of those, workers with most gold right
    judgments: int  # real-round judgments of the workers it removed


@dataclass(frozen=True)
class FilterEffects:
    rules: list[RuleEffect]
    decided: int  # counterfactuals with a kept label or discarded
    waiting: int  # need more votes and can still get them
    capped: int  # need more votes, but re-queues are used up
    hints: list[str]


def filter_effects(campaign: Campaign) -> FilterEffects:
    """What each worker filter removed, and where the counterfactuals stand."""
    qualities = WorkerQuality.objects.filter(
        campaign=campaign, qualified=False, held_until__isnull=True
    )
    judged = dict(
        Judgment.objects.filter(
            round__assignment__campaign=campaign,
            round__kind=RoundKind.REAL,
            round__submitted_at__isnull=False,
        )
        .values_list("round__worker_id")
        .annotate(n=Count("id"))
    )
    counts = {rule: [0, 0, 0, 0] for rule in RULE_SETTINGS}  # workers, alone, careful, judgments
    for quality in qualities:
        rules = {reason_rule(reason) for reason in quality.reasons} - {None}
        careful = (quality.gold_accuracy or 0) >= CAREFUL_GOLD_ACCURACY
        for rule in rules:
            counts[rule][0] += 1
            counts[rule][3] += judged.get(quality.worker_id, 0)
            if len(rules) == 1:
                counts[rule][1] += 1
                counts[rule][2] += careful
    effects = [
        RuleEffect(rule, RULE_SETTINGS[rule][0], *numbers) for rule, numbers in counts.items()
    ]
    capped_units = LabelingUnit.objects.filter(
        campaign=campaign,
        requeues__gte=campaign.max_requeues,
        completed__gte=F("judgments_needed"),
    )
    # One pass over the campaign's labels (each count was a query of its own, at a few
    # hundred milliseconds each on a large campaign).
    standing = AggregatedLabel.objects.filter(candidate__campaign=campaign).aggregate(
        decided=Count("id", filter=Q(needs_more=False)),
        needing=Count("id", filter=Q(needs_more=True)),
        capped=Count("id", filter=Q(needs_more=True, candidate__unit_item__unit__in=capped_units)),
    )
    hints = [
        f"{counted(effect.careful_alone, 'worker')} with at least "
        f"{CAREFUL_GOLD_ACCURACY:.0%} of their gold right "
        f"{'was' if effect.careful_alone == 1 else 'were'} removed by the {effect.rule} rule "
        f"alone: look at “{effect.setting}” on the settings page."
        for effect in effects
        if effect.careful_alone
    ]
    return FilterEffects(
        rules=effects,
        decided=standing["decided"],
        waiting=standing["needing"] - standing["capped"],
        capped=standing["capped"],
        hints=hints,
    )


@dataclass(frozen=True)
class ClassifierCheck:
    """The classifier in the loop against the crowd, on kept generated counterfactuals."""

    source: str  # Candidate.prediction_source: baseline, model or uploaded
    judged: int  # kept by the vote, with a predicted label
    agrees: int  # predicted label == the crowd's kept label
    predicted_flips: int  # predicted a label other than the original's
    confirmed_flips: int  # of those, the crowd kept that very label
    crowd_flips: int  # the crowd kept a label other than the original's
    found_flips: int  # of those, the prediction was the crowd's label

    @property
    def source_label(self) -> str:
        known = self.source in FlipClassifier.values
        return FlipClassifier(self.source).label if known else self.source

    @staticmethod
    def _share(part: int, whole: int) -> float | None:
        return part / whole if whole else None

    @property
    def agreement(self) -> float | None:
        return self._share(self.agrees, self.judged)

    @property
    def flip_precision(self) -> float | None:
        """How often a predicted flip was one: what the selection's flip term relies on."""
        return self._share(self.confirmed_flips, self.predicted_flips)

    @property
    def flip_recall(self) -> float | None:
        return self._share(self.found_flips, self.crowd_flips)


def classifier_checks(campaign: Campaign) -> list[ClassifierCheck]:
    """Per prediction source, how the classifier in the loop's labels of generated
    counterfactuals compare with the labels the crowd kept: what a researcher weighs
    `flip_weight` and `flip_classifier` by. The researcher's own candidates are left out:
    the built-in baseline learns from their labels, so it would be checked on its own
    training texts."""
    rows = (
        AggregatedLabel.objects.filter(
            candidate__campaign=campaign,
            candidate__source=CandidateSource.GENERATED,
            kept=True,
            label__isnull=False,
        )
        .exclude(candidate__predicted_label__isnull=True)
        .values_list(
            "candidate__prediction_source",
            "label_id",
            "candidate__predicted_label_id",
            "candidate__original__label_id",
        )
    )
    counts: dict[str, list[int]] = defaultdict(lambda: [0] * 6)
    for source, crowd, predicted, original in rows.iterator(chunk_size=2000):
        tally = counts[source]
        tally[0] += 1
        tally[1] += predicted == crowd
        tally[2] += predicted != original
        tally[3] += predicted != original and predicted == crowd
        tally[4] += crowd != original
        tally[5] += crowd != original and predicted == crowd
    return [ClassifierCheck(source, *tally) for source, tally in sorted(counts.items())]
