"""Appendix C.2's worker filter on hand-built workers, and the label-distribution filter."""

from types import SimpleNamespace

import pytest

from cfannotate.quality.rules import (
    FilterSettings,
    WorkerEvidence,
    filter_settings,
    gold_needed,
    passes_c2,
    total_variation,
    worker_verdict,
)

C2 = FilterSettings(min_median_seconds=18.0, min_gold_share=4 / 6, distribution_threshold=0.35)
BALANCED = {"positive": 50, "negative": 50}


def verdict(seconds, gold_right: int, gold_total: int = 6, labels=None):
    evidence = WorkerEvidence(
        round_seconds=seconds,
        gold_results=[True] * gold_right + [False] * (gold_total - gold_right),
        label_counts=labels or {},
    )
    return worker_verdict(evidence, others_label_counts=BALANCED, settings=C2)


def test_a_median_of_exactly_18_seconds_is_not_more_than_18():
    result = verdict([10, 18, 18, 18, 40], gold_right=5)
    assert result.median_seconds == 18
    assert not result.qualified
    assert result.reasons == ("median 18.0 s per round is not above 18 s",)


def test_just_above_18_seconds_with_4_of_6_gold_is_kept():
    result = verdict([18.5] * 5, gold_right=4)
    assert result.qualified and result.reasons == ()
    assert (result.gold_correct, result.gold_total) == (4, 6)


def test_3_of_6_gold_is_not_enough_however_slow():
    result = verdict([60] * 5, gold_right=3)
    assert not result.qualified
    assert result.reasons == ("3 of 6 gold counterfactuals right, fewer than 4",)


def test_6_of_6_gold_is_kept_however_fast():
    result = verdict([4, 5, 6], gold_right=6)
    assert result.qualified


def test_fast_with_5_of_6_gold_is_not_kept():
    assert not verdict([4, 5, 6], gold_right=5).qualified


def test_fast_and_wrong_gives_both_reasons():
    result = verdict([4, 5, 6], gold_right=2)
    assert len(result.reasons) == 2


def test_without_gold_the_worker_is_judged_on_time_alone():
    assert passes_c2(median_seconds=30, gold_correct=0, gold_total=0, settings=C2)
    assert not passes_c2(median_seconds=12, gold_correct=0, gold_total=0, settings=C2)


def test_a_worker_without_submitted_rounds_is_not_qualified():
    result = verdict([], gold_right=0, gold_total=0)
    assert not result.qualified
    assert result.reasons == ("no submitted round yet",)


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ({"a": 1}, {"a": 5}, 0.0),
        ({"a": 10}, {"b": 3}, 1.0),
        ({"a": 10}, {"a": 5, "b": 5}, 0.5),
        ({"a": 3, "b": 1}, {"a": 1, "b": 1}, 0.25),
        ({}, {"a": 1}, 0.0),
    ],
)
def test_total_variation(first, second, expected):
    assert total_variation(first, second) == pytest.approx(expected)


def test_one_label_every_time_is_filtered_by_its_distribution():
    result = verdict([30] * 20, gold_right=6, labels={"positive": 20})
    assert result.distribution_distance == pytest.approx(0.5)
    assert not result.qualified
    assert "label distribution differs" in result.reasons[0]
    assert "100% 'positive'" in result.reasons[0]


def test_a_distribution_close_to_everyone_elses_passes():
    result = verdict([30] * 20, gold_right=6, labels={"positive": 12, "negative": 8})
    assert result.distribution_distance == pytest.approx(0.1)
    assert result.qualified


def test_too_few_labels_say_nothing_about_the_distribution():
    result = verdict([30] * 3, gold_right=6, labels={"positive": 9})
    assert result.distribution_distance is None
    assert result.qualified


def test_a_threshold_of_one_turns_the_distribution_filter_off():
    settings = FilterSettings(distribution_threshold=1.0)
    evidence = WorkerEvidence(
        round_seconds=[30] * 20, gold_results=[True] * 6, label_counts={"positive": 20}
    )
    assert worker_verdict(
        evidence, others_label_counts={"negative": 9}, settings=settings
    ).qualified


@pytest.mark.parametrize(
    ("total", "share", "needed"),
    [(6, 4 / 6, 4), (3, 4 / 6, 2), (9, 4 / 6, 6), (6, 0.67, 4), (6, 1.0, 6), (6, 0.0, 0)],
)
def test_the_gold_share_is_rounded_to_a_count(total, share, needed):
    assert gold_needed(total, share) == needed


def test_the_gold_rule_is_a_share_not_a_running_count():
    # A random clicker gets some gold right in every assignment: 2 of 6, five times, is
    # 10 right ("at least 4"), but a share of a third.
    result = verdict([30] * 25, gold_right=10, gold_total=30)
    assert not result.qualified
    assert result.reasons == ("10 of 30 gold counterfactuals right, fewer than 20",)


def test_a_careful_worker_keeps_passing_as_their_gold_grows():
    # 85 % right over many assignments: the share holds, where "every assignment must
    # pass" would drop a careful worker sooner or later (0.89 per assignment of 4 gold).
    assert verdict([30] * 40, gold_right=34, gold_total=40).qualified


def test_one_gold_round_needs_two_of_three():
    assert verdict([30] * 5, gold_right=2, gold_total=3).qualified
    assert not verdict([30] * 5, gold_right=1, gold_total=3).qualified


def test_speeding_up_once_gold_ran_out_is_caught_by_the_time_rule():
    # Rounds without gold still count towards the median time per round.
    assert not verdict([30] * 5 + [4] * 6, gold_right=5).qualified


# --- A worker short of the share before C.2's 6 gold is held, not removed -----------------


def held(gold_right: int, gold_total: int, to_come: int, seconds=(30,) * 10, labels=None):
    evidence = WorkerEvidence(
        round_seconds=seconds,
        gold_results=[True] * gold_right + [False] * (gold_total - gold_right),
        gold_to_come=to_come,
        label_counts=labels or {},
    )
    return worker_verdict(evidence, others_label_counts=BALANCED, settings=C2)


def test_two_of_four_gold_with_more_to_come_is_on_hold_until_six():
    # CAD's pairs give two counterfactuals a gold round: 4 gold an assignment, where 3
    # right is a stricter bar than C.2's 4 of 6. 2 of 4 can still reach 4 of 6.
    result = held(2, 4, to_come=10)
    assert not result.qualified  # votes wait
    assert result.on_hold and result.held_until == 6
    assert result.reasons == (
        "2 of 4 gold counterfactuals right, fewer than 3: on hold until 6 gold are answered",
    )


def test_a_shortfall_that_no_luck_can_mend_is_decided_at_once():
    # 1 of 4: even the next 2 right make 3 of 6.
    result = held(1, 4, to_come=10)
    assert not result.qualified and not result.on_hold
    assert result.reasons == ("1 of 4 gold counterfactuals right, fewer than 3",)


def test_without_more_gold_to_come_the_share_decides_on_what_was_answered():
    assert not held(2, 4, to_come=0).on_hold
    # One more gold counterfactual can come: judged on 5 (3 needed), 2 + 1 can make it.
    assert held(2, 4, to_come=1).held_until == 5


def test_once_the_sample_is_answered_the_share_decides():
    assert held(5, 8, to_come=10).qualified  # 5 of 8 is C.2's share rounded
    result = held(4, 8, to_come=10)
    assert not result.qualified and not result.on_hold
    assert held(3, 4, to_come=10).qualified  # passing needs no waiting


def test_only_a_worker_short_on_gold_alone_is_held():
    fast = held(2, 4, to_come=10, seconds=(5,) * 10)
    assert not fast.on_hold and len(fast.reasons) == 2
    skewed = held(2, 4, to_come=10, labels={"positive": 30})
    assert not skewed.on_hold and len(skewed.reasons) == 2


def test_gold_rounds_of_three_are_judged_as_before():
    # Two gold rounds of three answer the sample in one assignment; one round of three
    # with one gold round an assignment likewise (C.2's 6 scaled to the campaign).
    assert not held(3, 6, to_come=30).on_hold
    evidence = WorkerEvidence(
        round_seconds=[30] * 5, gold_results=[True, False, False], gold_to_come=30
    )
    result = worker_verdict(
        evidence, others_label_counts=BALANCED, settings=FilterSettings(gold_sample=3)
    )
    assert not result.qualified and not result.on_hold


def test_the_gold_sample_is_the_campaigns_gold_rounds_at_three_each():
    campaign = SimpleNamespace(
        min_median_seconds=18.0,
        min_gold_share=4 / 6,
        label_distribution_threshold=0.35,
        gold_rounds_per_assignment=2,
    )
    assert filter_settings(campaign).gold_sample == 6
    campaign.gold_rounds_per_assignment = 3
    assert filter_settings(campaign).gold_sample == 9
