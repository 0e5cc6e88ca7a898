import pytest

from cfannotate.quality.agreement import agreement, cohen_kappa, fleiss_kappa, raw_agreement

POOLED = "Raw agreement, Fleiss' κ, Krippendorff's \N{GREEK SMALL LETTER ALPHA}"


def test_fleiss_kappa_on_the_textbook_example():
    # Fleiss (1971) as worked on Wikipedia: 10 subjects, 14 raters, 5 categories; kappa 0.210.
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    items = [[str(c) for c, n in enumerate(row) for _ in range(n)] for row in table]
    assert fleiss_kappa(items) == pytest.approx(0.210, abs=0.001)


def _cohen_by_hand(first, second) -> float:
    """The textbook formula: (observed - expected) / (1 - expected)."""
    n = len(first)
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    categories = set(first) | set(second)
    expected = sum(first.count(c) * second.count(c) for c in categories) / (n * n)
    return (observed - expected) / (1 - expected)


def test_cohen_kappa_matches_the_textbook_formula():
    first = ["a", "a", "b", "b", "a", "c", "c", "a", "b", "a"]
    second = ["a", "b", "b", "b", "a", "c", "a", "a", "b", "c"]
    items = [[x, y] for x, y in zip(first, second, strict=True)]
    assert cohen_kappa(items) == pytest.approx(_cohen_by_hand(first, second))
    assert cohen_kappa(items) == pytest.approx(0.53125)  # (0.7 - 0.36) / (1 - 0.36)


def test_perfect_agreement():
    items = [["a", "a"], ["b", "b"], ["a", "a"]]
    result = agreement(items)
    assert result.raw == 1.0
    assert result.cohen_kappa == pytest.approx(1.0)
    assert result.fleiss_kappa == pytest.approx(1.0)
    assert result.items == 3


def test_raw_agreement_counts_agreeing_pairs():
    # one item of three votes 2:1 has one agreeing pair out of three
    assert raw_agreement([["a", "a", "b"]]) == pytest.approx(1 / 3)
    assert raw_agreement([["a", "b"], ["a", "a"]]) == pytest.approx(0.5)


def test_undefined_cases_are_none():
    assert fleiss_kappa([["a"], ["b"]]) is None  # nobody judged twice
    assert cohen_kappa([["a", "a"], ["a", "a"]]) is None  # one category: chance is total
    assert agreement([]).raw is None


def test_single_judgments_are_left_out():
    assert agreement([["a"], ["a", "a"], ["b", "b"]]).items == 2


def test_krippendorffs_alpha_from_crowd_kit():
    from cfannotate.quality.estimates import krippendorff_alpha

    assert agreement([["a", "a"], ["b", "b"], ["a", "a"]]).krippendorff_alpha == 1.0
    # Nominal alpha on three units of two raters, one disagreement: 1 - D_o / D_e with
    # D_o = 2/6 (one disagreeing pair of two values) and D_e = 2 * 3 * 3 / (6 * 5).
    assert krippendorff_alpha([["a", "a"], ["a", "b"], ["b", "b"]]) == pytest.approx(
        1 - (2 / 6) / (18 / 30)
    )
    assert krippendorff_alpha([["a", "a"], ["a"]]) is None


def test_fleiss_kappa_with_unequal_judgments_per_item_by_hand():
    # P_i = 1, 0, 1 so P = 2/3; p_a = 4/7, p_b = 3/7 so P_e = 25/49;
    # kappa = (2/3 - 25/49) / (24/49) = 23/72.
    assert fleiss_kappa([["a", "a", "a"], ["a", "b"], ["b", "b"]]) == pytest.approx(23 / 72)


def test_fleiss_kappa_on_one_item():
    # P = 2/6 agreeing pairs; p = (2/3, 1/3) so P_e = 5/9; kappa = (1/3 - 5/9) / (4/9).
    assert fleiss_kappa([["a", "b", "a"]]) == pytest.approx(-0.5)


def test_fleiss_kappa_with_equal_counts_is_fleiss_1971():
    # Three raters on four items, worked by hand: P = (1 + 1/3 + 1/3 + 1) / 4 = 2/3,
    # p = (6/12, 6/12), P_e = 1/2, kappa = (2/3 - 1/2) / (1/2) = 1/3.
    items = [["a", "a", "a"], ["a", "a", "b"], ["b", "b", "a"], ["b", "b", "b"]]
    assert fleiss_kappa(items) == pytest.approx(1 / 3)


def test_total_chance_agreement_is_undefined_not_one():
    # Every judgment the same category: P = P_e = 1 and kappa is 0 / 0.
    items = [["a", "a", "a"], ["a", "a"]]
    assert fleiss_kappa(items) is None
    result = agreement(items)
    assert result.raw == 1.0
    assert result.fleiss_kappa_note == "undefined, as all 5 judgments chose the same category"
    # Agreeing on two categories is kappa 1.
    assert fleiss_kappa([["a", "a", "a"], ["b", "b"]]) == pytest.approx(1.0)


def test_each_statistic_says_what_it_is_computed_on():
    items = [["a", "a"], ["a", "b"], ["b", "b", "a"], ["a", "a", "a", "b"], ["b"]]
    result = agreement(items)
    assert (result.basis.items, result.basis.judgments) == (4, 11)
    assert (result.cohen_basis.items, result.cohen_basis.judgments) == (2, 4)
    assert (
        result.fleiss_kappa_note == "computed on 4 items with 2 to 4 judgments each (11 judgments)"
    )
    assert result.krippendorff_alpha_note == result.fleiss_kappa_note == result.raw_note
    assert result.cohen_kappa_note == (
        "computed on 2 items with 2 judgments each (4 judgments); "
        "the 2 items judged more often are left out"
    )
    assert result.notes == [
        f"{POOLED}: computed on 4 items with 2 to 4 judgments each (11 judgments).",
        "Cohen's κ: computed on 2 items with 2 judgments each (4 judgments); "
        "the 2 items judged more often are left out.",
    ]


def test_where_nothing_qualifies_the_notes_say_so():
    only_triples = agreement([["a", "b", "a"], ["b", "b", "b"]])
    assert only_triples.cohen_kappa is None
    assert only_triples.cohen_kappa_note == "not computed, as no item has exactly two judgments"
    assert only_triples.fleiss_kappa is not None
    nobody_twice = agreement([["a"], ["b"]])
    assert nobody_twice.fleiss_kappa is None and nobody_twice.krippendorff_alpha is None
    assert nobody_twice.fleiss_kappa_note == "not computed, as no item has two or more judgments"
    assert nobody_twice.notes == [
        f"{POOLED}: not computed, as no item has two or more judgments.",
        "Cohen's κ: not computed, as no item has exactly two judgments.",
    ]
