"""The worker filter of Polyjuice Appendix C.2, as plain functions over a worker's evidence.

C.2 keeps a worker "whose median labeling time per round was more than 18 seconds and
[who] correctly labeled at least 4 gold counterfactuals (out of 6), or who correctly
labeled all gold ones regardless of the time spent", the 6 being the two gold rounds of
one assignment; here the 4 of 6 is a share of the gold answered, and a worker who falls
short of it before answering C.2's 6 is put on hold rather than removed, unless the
shortfall is already certain. §4.2 adds
"filters on label distributions"; here a worker is flagged when the total-variation
distance between their labels and everyone else's in the campaign exceeds a threshold.
The numbers are campaign settings; nothing here touches the database.
"""

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

# Fewer labels than this say too little about a worker's label distribution, and fewer
# other workers than this say too little about the campaign's.
MIN_LABELS_FOR_DISTRIBUTION = 10
MIN_OTHER_WORKERS_FOR_DISTRIBUTION = 3
C2_GOLD_SHARE = 4 / 6  # "at least 4 gold counterfactuals (out of 6)": two gold rounds of three
C2_GOLD_PER_ROUND = 3  # "2 extra gold rounds, which included 6 unambiguous counterfactuals"


@dataclass(frozen=True)
class FilterSettings:
    min_median_seconds: float = 18.0  # "more than 18 seconds" per round
    min_gold_share: float = C2_GOLD_SHARE  # of the gold counterfactuals answered
    distribution_threshold: float = 0.35  # total-variation distance; 1.0 turns it off
    # How many gold counterfactuals the gold rule is sure of (C.2's 6; see `gold_on_hold`).
    gold_sample: int = 2 * C2_GOLD_PER_ROUND


def filter_settings(campaign) -> FilterSettings:
    """The filter settings of a campaign (any object with the campaign's setting names).

    The gold sample is what the campaign's gold rounds per assignment would hold at C.2's
    three counterfactuals each: 6 for two gold rounds, as in the paper.
    """
    return FilterSettings(
        min_median_seconds=campaign.min_median_seconds,
        min_gold_share=campaign.min_gold_share,
        distribution_threshold=campaign.label_distribution_threshold,
        gold_sample=campaign.gold_rounds_per_assignment * C2_GOLD_PER_ROUND,
    )


def gold_needed(total: int, share: float) -> int:
    """How many of `total` gold counterfactuals must be right: the share of them, rounded to
    the nearest whole one (C.2's 4 of 6; 2 of 3 in an assignment with one gold round)."""
    return math.floor(share * total + 0.5)


def gold_on_hold(correct: int, total: int, to_come: int, settings: FilterSettings) -> int | None:
    """The gold count a worker short of the share is held until, or None to decide now.

    C.2 judged each worker on 6 gold counterfactuals. Where rounds hold fewer than three
    (CAD's pairs give two), an assignment's gold is only 4, and 3 of 4 right is a
    stricter bar than 4 of 6: a careful worker who is right 85 % of the time misses it
    11 % of the time, against 5 % for 4 of 6. So a worker short of the share before
    answering `gold_sample` gold counterfactuals is held, not removed: their votes wait
    and they keep working until the sample is answered, when the share decides. Unless
    the shortfall is already certain (every gold counterfactual still to come right
    would not be enough), or no more gold can come (`to_come`: the rest of the worker's
    assignment in progress and the campaign's active gold they have not been given).
    """
    judged_on = min(settings.gold_sample, total + to_come)
    if total >= judged_on:
        return None
    if correct + (judged_on - total) < gold_needed(judged_on, settings.min_gold_share):
        return None
    return judged_on


@dataclass(frozen=True)
class WorkerEvidence:
    """What a worker did in one campaign: submitted rounds, gold answers, labels given."""

    round_seconds: Sequence[float] = ()  # real and gold rounds; training excluded
    gold_results: Sequence[bool] = ()  # one per gold counterfactual judged
    gold_to_come: int = 0  # gold counterfactuals the worker may still be given
    label_counts: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    qualified: bool
    reasons: tuple[str, ...]  # why not qualified, in words; empty when qualified
    median_seconds: float | None
    gold_correct: int
    gold_total: int
    distribution_distance: float | None  # None when too few labels to tell
    # Not qualified on the gold share alone, held until this many gold are answered: the
    # worker keeps working, their votes wait (`gold_on_hold`). None otherwise.
    held_until: int | None = None

    @property
    def on_hold(self) -> bool:
        return self.held_until is not None

    @property
    def gold_accuracy(self) -> float | None:
        return self.gold_correct / self.gold_total if self.gold_total else None


def total_variation(first: Mapping[str, float], second: Mapping[str, float]) -> float:
    """Half the L1 distance between two label distributions given as counts or shares."""
    first_total = sum(first.values())
    second_total = sum(second.values())
    if not first_total or not second_total:
        return 0.0
    labels = set(first) | set(second)
    return 0.5 * sum(
        abs(first.get(label, 0) / first_total - second.get(label, 0) / second_total)
        for label in labels
    )


def passes_c2(
    *, median_seconds: float | None, gold_correct: int, gold_total: int, settings: FilterSettings
) -> bool:
    """C.2's rule: (slow enough and enough gold right) or every gold right.

    Without gold (a campaign without gold rounds) the worker is judged on time alone,
    since the gold half of the rule cannot be applied.
    """
    slow_enough = median_seconds is not None and median_seconds > settings.min_median_seconds
    if gold_total == 0:
        return slow_enough
    if gold_correct == gold_total:
        return True
    return slow_enough and gold_correct >= gold_needed(gold_total, settings.min_gold_share)


def _c2_reasons(
    median: float | None, correct: int, total: int, settings: FilterSettings
) -> list[str]:
    if passes_c2(median_seconds=median, gold_correct=correct, gold_total=total, settings=settings):
        return []
    reasons = []
    if median is None:
        reasons.append("no submitted round yet")
    elif median <= settings.min_median_seconds:
        reasons.append(
            f"median {median:.1f} s per round is not above {settings.min_median_seconds:g} s"
        )
    needed = gold_needed(total, settings.min_gold_share)
    if total and correct < needed:
        reasons.append(f"{correct} of {total} gold counterfactuals right, fewer than {needed}")
    return reasons


# Which rule a reason comes from (the quality page counts what each rule removed).
RULES = {
    "time": "per round is not above",
    "gold": "gold counterfactuals right",
    "distribution": "label distribution differs",
}


def reason_rule(reason: str) -> str | None:
    """The rule ("time", "gold", "distribution") that gave a verdict's reason."""
    return next((rule for rule, marker in RULES.items() if marker in reason), None)


def _median(seconds: Sequence[float]) -> float | None:
    return statistics.median(seconds) if seconds else None


def worker_verdict(
    evidence: WorkerEvidence,
    *,
    others_label_counts: Mapping[str, int],
    settings: FilterSettings,
) -> Verdict:
    """Apply C.2 and the label-distribution filter to one worker.

    C.2's "4 (out of 6)" is a share of the gold answered so far (`min_gold_share`),
    checked each time an assignment's gold is answered: a measure that a random clicker
    fails however many assignments they take (2 of 6 five times is 10 right, "at least
    4", but a share of 0.33). `others_label_counts` are the labels every *other* worker
    gave in the campaign, so a prolific spammer cannot pull the reference distribution
    towards themselves; the caller passes none while fewer than
    MIN_OTHER_WORKERS_FOR_DISTRIBUTION others labeled. A worker who fails on the gold
    share alone before the gold sample is answered is held (`gold_on_hold`), not removed.
    """
    median = _median(evidence.round_seconds)
    gold_total = len(evidence.gold_results)
    gold_correct = sum(1 for result in evidence.gold_results if result)
    reasons = _c2_reasons(median, gold_correct, gold_total, settings)
    distance = None
    if sum(evidence.label_counts.values()) >= MIN_LABELS_FOR_DISTRIBUTION and others_label_counts:
        distance = total_variation(evidence.label_counts, others_label_counts)
        if distance > settings.distribution_threshold:
            top = max(evidence.label_counts, key=evidence.label_counts.get)
            share = evidence.label_counts[top] / sum(evidence.label_counts.values())
            reasons.append(
                f"label distribution differs from the campaign's by {distance:.2f} "
                f"(more than {settings.distribution_threshold:g}; {share:.0%} {top!r})"
            )
    held_until = None
    if len(reasons) == 1 and reason_rule(reasons[0]) == "gold":
        held_until = gold_on_hold(gold_correct, gold_total, evidence.gold_to_come, settings)
        if held_until is not None:
            reasons = [f"{reasons[0]}: on hold until {held_until} gold are answered"]
    return Verdict(
        qualified=not reasons,
        reasons=tuple(reasons),
        median_seconds=median,
        gold_correct=gold_correct,
        gold_total=gold_total,
        distribution_distance=distance,
        held_until=held_until,
    )
