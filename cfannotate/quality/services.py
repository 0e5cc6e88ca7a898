"""Writes of quality control: worker verdicts, kept labels, re-queues (Polyjuice C.2).

Everything is recomputed from the judgments, so every function here is safe to run
again. `quality_after_assignment` runs in the background once an assignment ends
(`tasks.assess_assignment`); `quality_refresh` recomputes a whole campaign (on demand,
from the page, the API or `manage.py quality_refresh`). The design note is `quality.md`.
"""

from collections import Counter, defaultdict
from collections.abc import Collection, Hashable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, Exists, F, Min, OuterRef, Q

from cfannotate.campaigns.models import Campaign, CampaignLabel
from cfannotate.labeling.models import (
    Assignment,
    AssignmentState,
    GoldItem,
    GoldKind,
    Judgment,
    LabelingUnit,
    Round,
    RoundKind,
    UnitItem,
)
from cfannotate.quality.decisions import decisions_propose
from cfannotate.quality.estimates import label_estimates
from cfannotate.quality.models import AggregatedLabel, AggregationMethod, WorkerQuality
from cfannotate.quality.rules import (
    MIN_OTHER_WORKERS_FOR_DISTRIBUTION,
    Verdict,
    WorkerEvidence,
    filter_settings,
    worker_verdict,
)
from cfannotate.quality.selectors import agreements_refresh
from cfannotate.quality.voting import Vote, vote_outcome


@dataclass(frozen=True)
class RefreshSummary:
    workers: int
    qualified: int
    candidates: int
    kept: int
    requeued_units: int
    decisions_proposed: int


# --- 1. Worker verdicts ----------------------------------------------------------------


def _submitted_judgments(campaign: Campaign):
    return Judgment.objects.filter(
        round__assignment__campaign=campaign, round__submitted_at__isnull=False
    ).exclude(round__kind=RoundKind.TRAINING)


def _label_counts(campaign: Campaign, worker_ids: Collection[int] | None) -> dict[int, Counter]:
    """Labels each worker gave on real rounds (gold rounds are the same for everyone).

    Counted from the judgments for `worker_ids` (everyone when None); the other workers'
    come from their stored verdicts, so the check after each round does not scan the
    whole campaign.
    """
    counts: dict[int, Counter] = defaultdict(Counter)
    rows = _submitted_judgments(campaign).filter(round__kind=RoundKind.REAL, label__isnull=False)
    if worker_ids is not None:
        rows = rows.filter(round__worker_id__in=worker_ids)
        stored = WorkerQuality.objects.filter(campaign=campaign).exclude(worker_id__in=worker_ids)
        for worker_id, label_counts in stored.values_list("worker_id", "label_counts"):
            counts[worker_id].update(label_counts)
    grouped = rows.values_list("round__worker_id", "label__value").annotate(n=Count("id"))
    for worker_id, label, n in grouped:
        counts[worker_id][label] += n
    return counts


def _evidence(campaign: Campaign, worker_ids: Collection[int]) -> dict[int, WorkerEvidence]:
    seconds: dict[int, list[float]] = defaultdict(list)
    rounds = (
        Round.objects.filter(
            assignment__campaign=campaign, worker_id__in=worker_ids, submitted_at__isnull=False
        )
        .exclude(kind=RoundKind.TRAINING)
        .values_list("worker_id", "served_at", "submitted_at")
    )
    for worker_id, served_at, submitted_at in rounds:
        seconds[worker_id].append((submitted_at - served_at).total_seconds())
    gold: dict[int, list[bool]] = defaultdict(list)
    answers = (
        _submitted_judgments(campaign)
        .filter(round__kind=RoundKind.GOLD, round__worker_id__in=worker_ids)
        .values_list(
            "round__worker_id",
            "is_valid",
            "label_id",
            "candidate__gold_item__expected_valid",
            "candidate__gold_item__expected_label_id",
        )
        .order_by("round__worker_id", "id")
    )
    for worker_id, is_valid, label_id, expected_valid, expected_label_id in answers:
        # "Correctly labeled" (C.2): the validity and the class label both as expected.
        gold[worker_id].append(is_valid == expected_valid and label_id == expected_label_id)
    to_come = _gold_to_come(campaign, worker_ids)
    return {
        worker_id: WorkerEvidence(
            round_seconds=seconds[worker_id],
            gold_results=gold[worker_id],
            gold_to_come=to_come[worker_id],
        )
        for worker_id in worker_ids
    }


def _gold_to_come(campaign: Campaign, worker_ids: Collection[int]) -> dict[int, int]:
    """Gold counterfactuals each worker may still answer: those of the campaign's active
    hidden gold rounds, less the rounds the worker submitted or can no longer get (a
    worker sees a gold round once, so one planned in an assignment that ended without
    it is gone for them). A round planned in the assignment in progress is still to come.
    """
    active_gold = GoldItem.objects.filter(
        gold_round__campaign=campaign, gold_round__kind=GoldKind.GOLD, gold_round__is_active=True
    )
    available = active_gold.count()
    gone = (
        Round.objects.filter(
            Q(submitted_at__isnull=False) | ~Q(assignment__state=AssignmentState.ACTIVE),
            worker_id__in=worker_ids,
            gold_round__campaign=campaign,
            gold_round__kind=GoldKind.GOLD,
            gold_round__is_active=True,
        )
        .values_list("worker_id")
        .annotate(n=Count("gold_round__items"))
    )
    to_come = defaultdict(lambda: available)
    for worker_id, n in gone:
        to_come[worker_id] = available - n
    return to_come


def _workers_in(campaign: Campaign) -> set[int]:
    return set(
        Round.objects.filter(assignment__campaign=campaign, submitted_at__isnull=False)
        .exclude(kind=RoundKind.TRAINING)
        .values_list("worker_id", flat=True)
        .distinct()
    )


def workers_assess(
    *, campaign: Campaign, worker_ids: Collection[int] | None = None
) -> dict[int, tuple[bool | None, Verdict]]:
    """Apply the worker filter and store each verdict; returns {worker: (before, verdict)}."""
    label_counts = _label_counts(campaign, worker_ids)
    worker_ids = _workers_in(campaign) if worker_ids is None else set(worker_ids)
    if not worker_ids:
        return {}
    settings = filter_settings(campaign)
    everyone = Counter()
    for counts in label_counts.values():
        everyone.update(counts)
    evidence = _evidence(campaign, worker_ids)
    busy = set(
        Assignment.objects.filter(
            campaign=campaign, worker_id__in=worker_ids, state=AssignmentState.ACTIVE
        ).values_list("worker_id", flat=True)
    )
    before = dict(
        WorkerQuality.objects.filter(campaign=campaign, worker_id__in=worker_ids).values_list(
            "worker_id", "qualified"
        )
    )
    results = {}
    rows = []
    for worker_id in sorted(worker_ids):
        own = label_counts.get(worker_id, Counter())
        others = len(label_counts) - (worker_id in label_counts)
        verdict = worker_verdict(
            WorkerEvidence(
                round_seconds=evidence[worker_id].round_seconds,
                gold_results=evidence[worker_id].gold_results,
                gold_to_come=evidence[worker_id].gold_to_come,
                label_counts=own,
            ),
            others_label_counts=everyone - own
            if others >= MIN_OTHER_WORKERS_FOR_DISTRIBUTION
            else {},
            settings=settings,
        )
        results[worker_id] = (before.get(worker_id), verdict)
        rows.append(
            WorkerQuality(
                campaign=campaign,
                worker_id=worker_id,
                qualified=verdict.qualified,
                reasons=list(verdict.reasons),
                settled=worker_id not in busy,
                rounds=len(evidence[worker_id].round_seconds),
                median_seconds=verdict.median_seconds,
                gold_correct=verdict.gold_correct,
                gold_total=verdict.gold_total,
                label_counts=dict(own),
                distribution_distance=verdict.distribution_distance,
                held_until=verdict.held_until,
            )
        )
    WorkerQuality.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["campaign", "worker"],
        update_fields=[
            "qualified",
            "reasons",
            "settled",
            "rounds",
            "median_seconds",
            "gold_correct",
            "gold_total",
            "label_counts",
            "distribution_distance",
            "held_until",
            "updated_at",
        ],
    )
    return results


# --- 2. Kept labels ------------------------------------------------------------------------


def _qualified_workers(campaign: Campaign) -> set[int]:
    return set(
        WorkerQuality.objects.filter(campaign=campaign, qualified=True).values_list(
            "worker_id", flat=True
        )
    )


VOTE_FIELDS = [
    "method",
    "label",
    "is_valid",
    "kept",
    "votes",
    "qualified_votes",
    "label_votes",
    "valid_votes",
    "agreement",
    "needs_more",
]
ESTIMATE_FIELDS = ["ds_label", "ds_confidence", "glad_label", "mace_label"]
AGGREGATE_WRITE_BATCH = 1_000


def candidates_aggregate(
    *, campaign: Campaign, candidate_ids: Collection[int] | None = None
) -> list[AggregatedLabel]:
    """Vote on every counterfactual with submitted real-round judgments (or the given ones).

    The crowd-kit estimates beside the vote (K > 2) are computed over the whole campaign
    only (`candidate_ids` None: the sweep and the refresh): they model every worker
    across every item, which a few units say little about, and cost a second or so.
    """
    judgments = _submitted_judgments(campaign).filter(
        round__kind=RoundKind.REAL, is_valid__isnull=False, label__isnull=False
    )
    if candidate_ids is not None:
        judgments = judgments.filter(candidate_id__in=candidate_ids)
    rows = judgments.values_list("candidate_id", "round__worker_id", "is_valid", "label__value")
    qualified = _qualified_workers(campaign)
    all_votes: dict[int, int] = Counter()
    votes: dict[int, list[tuple[int, Vote]]] = defaultdict(list)
    for candidate_id, worker_id, is_valid, label in rows:
        all_votes[candidate_id] += 1
        if worker_id in qualified:
            votes[candidate_id].append((worker_id, Vote(is_valid=is_valid, label=label)))
    labels = {label.value: label for label in CampaignLabel.objects.filter(campaign=campaign)}
    k = campaign.judgments_per_candidate
    aggregates = []
    for candidate_id in sorted(all_votes):
        qualified_votes = [vote for _, vote in votes[candidate_id]]
        outcome = vote_outcome(
            qualified_votes, k=k, agreement_threshold=campaign.agreement_threshold
        )
        split = Counter(vote.label for vote in qualified_votes)
        aggregates.append(
            AggregatedLabel(
                candidate_id=candidate_id,
                method=AggregationMethod.MAJORITY,
                label=labels.get(outcome.label) if outcome.label else None,
                is_valid=outcome.is_valid,
                kept=outcome.kept,
                votes=all_votes[candidate_id],
                qualified_votes=outcome.votes,
                label_votes={value: split[value] for value in labels},
                valid_votes=sum(vote.is_valid for vote in qualified_votes),
                agreement=outcome.agreement,
                needs_more=outcome.needs_more,
            )
        )
    whole = candidate_ids is None
    if k > 2 and whole:
        _estimates_into(aggregates, votes, labels)
    fields = [*VOTE_FIELDS, *(ESTIMATE_FIELDS if whole else [])]
    # Only what changed is written: a steady pass (the sweep, every two minutes while
    # labeling) wrote every kept label of the campaign again, seconds at 200k candidates,
    # and moved `updated_at` (what the agreement figures are kept for) each time.
    changed = _aggregates_changed(campaign, aggregates, fields, candidate_ids)
    AggregatedLabel.objects.bulk_create(
        changed,
        batch_size=AGGREGATE_WRITE_BATCH,
        update_conflicts=True,
        unique_fields=["candidate"],
        update_fields=[*fields, "updated_at"],
    )
    return aggregates


def _aggregates_changed(
    campaign: Campaign,
    aggregates: list[AggregatedLabel],
    fields: list[str],
    candidate_ids: Collection[int] | None,
) -> list[AggregatedLabel]:
    """The aggregates that are new or differ from the stored ones in `fields`."""
    columns = [AggregatedLabel._meta.get_field(name).attname for name in fields]
    stored = AggregatedLabel.objects.filter(candidate__campaign=campaign)
    if candidate_ids is not None:
        stored = stored.filter(candidate_id__in=candidate_ids)
    before = {row[0]: row[1:] for row in stored.values_list("candidate_id", *columns)}
    return [
        aggregate
        for aggregate in aggregates
        if before.get(aggregate.candidate_id)
        != tuple(getattr(aggregate, column) for column in columns)
    ]


def _estimates_into(aggregates, votes, labels: dict[str, CampaignLabel]) -> None:
    """Fill the crowd-kit estimates (Dawid-Skene, GLAD, MACE) of voted aggregates."""
    estimates = label_estimates(
        {
            aggregate.candidate_id: [
                (worker_id, vote.label) for worker_id, vote in votes[aggregate.candidate_id]
            ]
            for aggregate in aggregates
            if votes[aggregate.candidate_id]
        }
    )
    for aggregate in aggregates:
        estimate = estimates.get(aggregate.candidate_id)
        if estimate is None:
            continue
        aggregate.ds_label = labels[estimate.dawid_skene]
        aggregate.ds_confidence = estimate.dawid_skene_confidence
        aggregate.glad_label = labels[estimate.glad]
        aggregate.mace_label = labels[estimate.mace]


# --- 3. Re-queue --------------------------------------------------------------------------


def units_requeue(*, campaign: Campaign, unit_ids: Collection[int] | None = None) -> int:
    """Give disputed units more judgments, up to the campaign's cap; returns units re-queued.

    A unit is looked at once all its rounds are submitted and every worker who judged it
    has a verdict (their assignment's gold is answered, or an assignment ended), so the
    votes that count are known. It gets as many extra judgments as its neediest
    counterfactual lacks qualified votes (at least one for a split vote), within the cap.
    """
    units = LabelingUnit.objects.filter(
        campaign=campaign,
        completed__gte=F("judgments_needed"),
        requeues__lt=campaign.max_requeues,
    )
    if unit_ids is not None:
        units = units.filter(id__in=unit_ids)
    assessed = WorkerQuality.objects.filter(campaign=campaign).values("worker_id")
    awaiting_verdict = Round.objects.filter(
        unit=OuterRef("pk"), submitted_at__isnull=False
    ).exclude(worker_id__in=assessed)
    # One grouped query: each disputed unit with the fewest qualified votes among its
    # counterfactuals that need more (the filter comes before the annotation, so the
    # minimum is over those counterfactuals only).
    disputed = (
        units.filter(~Exists(awaiting_verdict))
        .filter(items__candidate__aggregated_label__needs_more=True)
        .values_list("id", "judgments_needed", "requeues")
        .annotate(fewest=Min("items__candidate__aggregated_label__qualified_votes"))
        .order_by("id")
    )
    k = campaign.judgments_per_candidate
    changes: dict[int, tuple[int, int, int]] = {}
    for unit_id, judgments_needed, requeues, fewest in disputed:
        # The neediest counterfactual lacks K - (its qualified votes), at least one.
        extra = min(max(k - fewest, 1), campaign.max_requeues - requeues)
        if extra > 0:
            changes[unit_id] = (judgments_needed, requeues, extra)
    return _units_update(changes, _requeue_update)


def _requeue_update(change: tuple[int, int, int], unit_ids: list[int]) -> int:
    judgments_needed, requeues, extra = change
    # Conditional on what was read, so two refreshes never add twice.
    return LabelingUnit.objects.filter(
        id__in=unit_ids, judgments_needed=judgments_needed, requeues=requeues
    ).update(judgments_needed=F("judgments_needed") + extra, requeues=F("requeues") + extra)


# Units locked and updated per transaction: bounds the ids in one statement (SQLite takes
# at most 32,766 parameters) and how long claimers find units locked.
UNITS_PER_UPDATE = 5000


def _units_update(changes: dict[int, Hashable], update) -> int:
    """Apply `update(change, unit_ids)` to the units, `changes` {unit id: change}, grouped
    by change; returns the units updated.

    One UPDATE per distinct change (a handful of values, however many units), not per
    unit. The units are locked first, in id order, as every other writer of several
    units locks them (`quality_after_assignment`, lease expiry, a worker stopped
    early): a multi-row UPDATE locks rows in whatever order it scans them, and two
    transactions that lock shared rows in different orders can deadlock. Claimers skip
    locked units and try again a moment later (`units_claim`).
    """
    ordered = sorted(changes)
    updated = 0
    for start in range(0, len(ordered), UNITS_PER_UPDATE):
        batch = ordered[start : start + UNITS_PER_UPDATE]
        groups: dict[Hashable, list[int]] = defaultdict(list)
        for unit_id in batch:
            groups[changes[unit_id]].append(unit_id)
        with transaction.atomic():
            list(
                LabelingUnit.objects.select_for_update()
                .filter(id__in=batch)
                .order_by("id")
                .values_list("id", flat=True)
            )
            updated += sum(update(change, ids) for change, ids in groups.items())
    return updated


def units_replace_filtered(*, campaign: Campaign, worker_ids: Collection[int]) -> int:
    """Every round a filtered worker holds on a unit is one judgment more the unit needs.

    A unit needs K qualified judgments plus its re-queues for disagreement; the rounds
    of filtered workers do not count towards K, so each one is replaced, outside the
    re-queue cap (the cap limits disputes, not spam). Computed from the rounds, so it is
    safe to run again; returns the units whose need grew.
    """
    filtered = WorkerQuality.objects.filter(campaign=campaign, qualified=False).values("worker_id")
    units = (
        LabelingUnit.objects.filter(campaign=campaign, rounds__worker_id__in=worker_ids)
        .annotate(
            filtered_rounds=Count("rounds", filter=Q(rounds__worker_id__in=filtered), distinct=True)
        )
        .filter(filtered_rounds__gt=0)
        .distinct()
        .order_by("id")
    )
    k = campaign.judgments_per_candidate
    changes: dict[int, int] = {}
    rows = units.values_list("id", "requeues", "judgments_needed", "filtered_rounds")
    for unit_id, requeues, judgments_needed, filtered_rounds in rows:
        needed = k + requeues + filtered_rounds
        if judgments_needed < needed:  # most runs change nothing: no UPDATE then
            changes[unit_id] = needed
    return _units_update(changes, _need_update)


def _need_update(needed: int, unit_ids: list[int]) -> int:
    return LabelingUnit.objects.filter(id__in=unit_ids, judgments_needed__lt=needed).update(
        judgments_needed=needed
    )


def workers_stop(*, campaign: Campaign, worker_ids: Collection[int]) -> int:
    """Filtered workers are served no more rounds: the rounds of their assignments in
    progress that were not shown yet are withdrawn, their units back in the pool at
    once. The round on their screen stays theirs to submit; an assignment with nothing
    left to do ends (submitted, with its completion code), so the worker is told they
    are done and can hand the work back to the platform. Returns the rounds withdrawn.
    """
    from cfannotate.labeling.assignments import assignment_finish_early

    if not worker_ids:
        return 0
    unsubmitted = Round.objects.filter(assignment=OuterRef("pk"), submitted_at__isnull=True)
    # One query for every worker, and only the assignments with something to do: rounds
    # not shown yet, or none left to submit. One stopped on an earlier pass keeps only
    # the round on screen, and ends when the worker submits it.
    active = (
        Assignment.objects.filter(
            campaign=campaign, worker_id__in=worker_ids, state=AssignmentState.ACTIVE
        )
        .filter(Exists(unsubmitted.filter(served_at__isnull=True)) | ~Exists(unsubmitted))
        .values_list("id", flat=True)
    )
    return sum(
        assignment_finish_early(assignment_id=assignment_id)
        for assignment_id in active.order_by("id")
    )


def worker_stop(*, campaign: Campaign, worker_id: int) -> int:
    """`workers_stop` for one worker."""
    return workers_stop(campaign=campaign, worker_ids=[worker_id])


# --- Orchestration --------------------------------------------------------------------------


def quality_refresh(*, campaign: Campaign) -> RefreshSummary:
    """Recompute the whole campaign: verdicts, kept labels, re-queues, proposed decisions,
    and the agreement figures the quality page shows."""
    with transaction.atomic():
        verdicts = workers_assess(campaign=campaign)
        aggregates = candidates_aggregate(campaign=campaign)
    filtered = [worker for worker, (_, verdict) in verdicts.items() if not verdict.qualified]
    removed = [worker for worker in filtered if not verdicts[worker][1].on_hold]
    workers_stop(campaign=campaign, worker_ids=removed)
    units_replace_filtered(campaign=campaign, worker_ids=filtered)
    requeued = units_requeue(campaign=campaign)
    proposed = decisions_propose(campaign=campaign)
    # The agreement figures of these labels, kept for the pages (the sweep's included, so
    # a page polled while labeling reads them instead of every judgment).
    agreements_refresh(campaign)
    return RefreshSummary(
        workers=len(verdicts),
        qualified=sum(1 for _, verdict in verdicts.values() if verdict.qualified),
        candidates=len(aggregates),
        kept=sum(1 for aggregate in aggregates if aggregate.kept),
        requeued_units=requeued,
        decisions_proposed=proposed,
    )


def quality_after_assignment(*, assignment_id: int) -> None:
    """Bring quality up to date after an assignment's gold is answered or it ended.

    Runs as a background task (`tasks.assess_assignment`), never in the worker's
    request: once the last gold round of an assignment is submitted (so a verdict comes
    early), and once the assignment ends (submitted, expired or returned). The worker's
    verdict is recomputed. A worker the filters remove is served no more rounds and
    every unit they hold needs one judgment more (`units_replace_filtered`). The
    counterfactuals of the units the assignment submitted are re-voted, and every
    counterfactual the worker ever judged in the campaign when the verdict changed. The
    units involved are locked first, so two of these running at once for workers who
    share a unit vote one after the other, each with every committed judgment in view.
    Then the worker's units are re-queued where votes disagree (units that waited for
    this worker's verdict included) and, for a submitted assignment, its decisions
    are proposed.
    """
    assignment = Assignment.objects.select_related("campaign").filter(id=assignment_id).first()
    if assignment is None:
        return
    campaign, worker_id = assignment.campaign, assignment.worker_id
    with transaction.atomic():
        assessed = workers_assess(campaign=campaign, worker_ids=[worker_id])
        before, verdict = assessed[worker_id]
        changed = before != verdict.qualified
        judged = Q(rounds__worker_id=worker_id) if changed else Q(rounds__assignment=assignment)
        unit_ids = list(
            LabelingUnit.objects.filter(
                judged, campaign=campaign, rounds__submitted_at__isnull=False
            )
            .order_by("id")
            .values_list("id", flat=True)
            .distinct()
        )
        list(
            LabelingUnit.objects.select_for_update()
            .filter(id__in=unit_ids)
            .order_by("id")
            .values_list("id", flat=True)
        )
        candidate_ids = UnitItem.objects.filter(unit_id__in=unit_ids).values_list(
            "candidate_id", flat=True
        )
        candidates_aggregate(campaign=campaign, candidate_ids=list(candidate_ids))
    if not verdict.qualified:
        if not verdict.on_hold:  # a held worker keeps working towards the gold sample
            worker_stop(campaign=campaign, worker_id=worker_id)
        units_replace_filtered(campaign=campaign, worker_ids=[worker_id])
    # Every unit this worker judged: some may have waited for this verdict.
    theirs = LabelingUnit.objects.filter(campaign=campaign, rounds__worker_id=worker_id)
    units_requeue(campaign=campaign, unit_ids=list(theirs.values_list("id", flat=True)))
    decisions_propose(campaign=campaign, assignment_ids=[assignment.id])  # once submitted
