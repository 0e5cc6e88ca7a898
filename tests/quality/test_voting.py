"""The vote of Appendix C.2: one valid vote suffices, the class labels must agree."""

import pytest

from cfannotate.quality.voting import Vote, vote_outcome


def outcome(*votes, k=2, threshold=0.6):
    return vote_outcome(
        [Vote(valid, label) for valid, label in votes], k=k, agreement_threshold=threshold
    )


def test_one_valid_and_one_invalid_vote_that_agree_keep_the_label():
    result = outcome((True, "positive"), (False, "positive"))
    assert (result.kept, result.label, result.is_valid) == (True, "positive", True)
    assert result.agreement == 1.0
    assert not result.needs_more


def test_votes_that_disagree_keep_nothing_and_ask_for_more():
    result = outcome((True, "positive"), (True, "negative"))
    assert not result.kept
    assert result.label is None  # a tie has no winner
    assert result.agreement == 0.5
    assert result.needs_more


def test_two_invalid_votes_are_a_settled_discard():
    result = outcome((False, "positive"), (False, "positive"))
    assert not result.kept and not result.is_valid
    assert not result.needs_more


def test_a_single_qualified_vote_is_not_enough_with_k_2():
    result = outcome((True, "positive"))
    assert not result.kept
    assert result.needs_more


def test_no_votes():
    result = outcome()
    assert (result.kept, result.votes, result.needs_more) == (False, 0, True)


def test_a_third_vote_settles_a_split_at_two_thirds():
    result = outcome((True, "positive"), (True, "negative"), (True, "positive"))
    assert result.kept and result.label == "positive"
    assert result.agreement == pytest.approx(2 / 3)


def test_an_unanimity_threshold_refuses_two_of_three():
    result = outcome((True, "positive"), (True, "negative"), (True, "positive"), threshold=1.0)
    assert not result.kept and result.label == "positive"
    assert result.needs_more


def test_k_3_needs_three_agreeing_votes():
    assert not outcome((True, "a"), (True, "a"), k=3).kept
    assert outcome((True, "a"), (True, "a"), (False, "a"), k=3).kept


def test_the_valid_vote_must_back_the_winning_label():
    # Two of three say positive, but both of them called x̂ invalid; the one "valid"
    # came from the dissenter. C.2's "at least one annotator deemed valid" is one of
    # the annotators who agreed on the label.
    result = outcome((False, "positive"), (True, "negative"), (False, "positive"))
    assert result.label == "positive" and result.is_valid
    assert not result.kept
    assert result.needs_more  # a dispute: another vote can settle it
    settled = outcome(
        (False, "positive"), (True, "negative"), (False, "positive"), (True, "positive")
    )
    assert settled.kept and settled.label == "positive"


def test_with_k_2_the_rule_is_c2_whichever_vote_is_valid():
    assert outcome((False, "positive"), (True, "positive")).kept
    assert outcome((True, "positive"), (False, "positive")).kept
