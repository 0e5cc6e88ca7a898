"""The crowd simulation of bench/crowd_sim.py, with a fixed seed, as an acceptance test."""

import random

from bench.crowd_sim import BEHAVIOURS, answer, crowd_mix, simulate

LABELS = ("positive", "negative")


def test_filters_and_vote_recover_the_truth_from_a_crowd_with_30_percent_spammers(researcher):
    result = simulate(owner=researcher, workers=30, units=200, seed=11)

    assert result.spammers >= 6 and result.careful >= 14
    assert result.spammer_recall == 1.0  # every spammer is filtered
    assert result.kept_accuracy >= 0.95
    assert result.careful_kept_share >= 0.85
    assert result.kept >= 200  # a useful share of the 600 counterfactuals survives
    assert result.requeued_units > 0  # spammers' units were sent out again
    assert result.result_line().startswith("RESULT crowd_sim kept_accuracy=")


def test_the_crowd_mix_is_thirty_percent_spammers_of_three_kinds():
    mix = crowd_mix(30, random.Random(0))
    kinds = [behaviour.kind for behaviour in mix]
    assert kinds.count("careful") == 21
    assert kinds.count("random") == kinds.count("constant") == kinds.count("fast") == 3


def test_careful_workers_are_right_about_nine_times_in_ten():
    rng = random.Random(1)
    truth = (True, "positive")
    right = sum(answer(BEHAVIOURS["careful"], truth, LABELS, rng) == truth for _ in range(4000))
    assert 0.88 < right / 4000 < 0.92
    assert {
        answer(BEHAVIOURS["constant"], (False, "negative"), LABELS, rng) for _ in range(20)
    } == {(True, "positive")}
