import pytest

from cfannotate.quality.agreement import agreement, cohen_kappa, fleiss_kappa, raw_agreement


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
