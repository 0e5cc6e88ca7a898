import itertools
import math
import random
from dataclasses import replace

import numpy as np
import pytest

from generation import selection
from generation.relationship import Relationship
from generation.selection import (
    DistanceWeights,
    RelationshipFeatures,
    relationship_distance,
    select_diverse,
    select_diverse_many,
    select_originals,
)
from generation.tokens import LEXICAL, NEGATION, QUANTIFIER


def rel(base, removed=(), added=(), tree=(), code=LEXICAL) -> Relationship:
    return Relationship(base, frozenset(removed), frozenset(added), frozenset(tree), code)


def random_relationships(rng: random.Random, count: int, bases: int) -> list[Relationship]:
    """Small vocabularies so that overlaps, empty sets and exact duplicates all occur."""

    def some(alphabet: str, most: int) -> list[str]:
        return rng.sample(alphabet, rng.randint(0, most))

    return [
        rel(
            f"x{rng.randrange(bases)}",
            some("abcdefgh", 3),
            some("ijklmnop", 3),
            some("qrstu", 2),
            rng.choice([LEXICAL, NEGATION, QUANTIFIER]),
        )
        for _ in range(count)
    ]


def facility_location(similarity: np.ndarray, chosen) -> float:
    return float(similarity[:, list(chosen)].max(axis=1).sum()) if chosen else 0.0


# §4.1's example. "a man walks" -> "a woman walks" is in L already; "the man is dancing"
# -> "the woman is dancing" makes the same change to another sentence, "that dog is with
# the man" -> "... the girl" a similar lexical change; "a man walks" -> "two people talk"
# changes something else. All four share one pool (the paper's L spans originals).
MAN_WOMAN = rel("a man walks", {"man"}, {"woman"}, {"nsubj:NOUN"}, LEXICAL)
SAME_CHANGE = rel("the man is dancing", {"man"}, {"woman"}, {"nsubj:NOUN"}, LEXICAL)
SIMILAR_CHANGE = rel("that dog is with the man", {"man"}, {"girl"}, {"pobj:NOUN"}, LEXICAL)
TWO_PEOPLE = rel(
    "a man walks",
    {"man", "walk"},
    {"two", "people", "talk"},
    {"nsubj:NOUN", "ROOT:VERB"},
    QUANTIFIER,
)
PAPER_POOL = [MAN_WOMAN, SAME_CHANGE, SIMILAR_CHANGE, TWO_PEOPLE]


def test_paper_example_prefers_two_people_after_man_to_woman():
    # With default weights (x 4.5) S sums to 11.75, 10.75, 9, 7.5: "a man -> woman walks" is
    # the most central and goes first. It then covers "the man -> woman" (S = 3.5 of 4.5)
    # and "that dog ... man -> girl" (2 of 4.5), so the gains are 1, 2.5 and 2.75.
    chosen = select_diverse(PAPER_POOL, k=3, groups=["L"] * 4)
    assert chosen == [0, 3, 2]  # "two people" second; the same change never
    assert relationship_distance(MAN_WOMAN, SAME_CHANGE) < relationship_distance(
        MAN_WOMAN, SIMILAR_CHANGE
    )
    assert relationship_distance(MAN_WOMAN, SIMILAR_CHANGE) < relationship_distance(
        SAME_CHANGE, TWO_PEOPLE
    )


def test_paper_example_distances():
    assert relationship_distance(MAN_WOMAN, SAME_CHANGE) == pytest.approx(1.0 / 4.5)  # base only
    # removed same; added, tree differ: 1 + 0.5, plus the base.
    assert relationship_distance(MAN_WOMAN, SIMILAR_CHANGE) == pytest.approx(2.5 / 4.5)


# D_L ---------------------------------------------------------------------------------------


def test_distance_is_symmetric_bounded_and_zero_on_identical():
    rng = random.Random(1)
    relationships = random_relationships(rng, 60, bases=3)
    weights = DistanceWeights(base=0.3, removed=2.0, added=1.0, tree=0.0, code=0.7)
    for a, b in itertools.product(relationships, repeat=2):
        distance = relationship_distance(a, b, weights)
        assert 0.0 <= distance <= 1.0
        assert distance == relationship_distance(b, a, weights)
    for a in relationships:
        assert relationship_distance(a, a, weights) == 0.0
    assert relationship_distance(rel("x"), rel("x")) == 0.0  # empty sets are the same change


def test_distance_is_one_when_everything_differs():
    a = rel("x", {"a"}, {"b"}, {"t"}, LEXICAL)
    b = rel("y", {"c"}, {"d"}, {"u"}, NEGATION)
    assert relationship_distance(a, b) == pytest.approx(1.0)


@pytest.mark.parametrize("component", ["base", "removed", "added", "tree", "code"])
def test_each_component_counts_with_its_weight_and_not_without(component):
    a = rel("x", {"a"}, {"b"}, {"t"}, LEXICAL)
    changed = {
        "base": rel("y", {"a"}, {"b"}, {"t"}, LEXICAL),
        "removed": rel("x", {"z"}, {"b"}, {"t"}, LEXICAL),
        "added": rel("x", {"a"}, {"z"}, {"t"}, LEXICAL),
        "tree": rel("x", {"a"}, {"b"}, {"z"}, LEXICAL),
        "code": rel("x", {"a"}, {"b"}, {"t"}, NEGATION),
    }[component]
    defaults = DistanceWeights()
    expected = getattr(defaults, component) / defaults.total
    assert relationship_distance(a, changed) == pytest.approx(expected)
    without = DistanceWeights(**{**defaults.as_dict(), component: 0.0})
    assert relationship_distance(a, changed, without) == 0.0


def test_default_weights_match_the_campaign_defaults():
    assert DistanceWeights().as_dict() == {
        "base": 1.0,
        "removed": 1.0,
        "added": 1.0,
        "tree": 0.5,
        "code": 1.0,
    }


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"removed": -1.0}, "non-negative"),
        ({"base": 0, "removed": 0, "added": 0, "tree": 0, "code": 0}, "all zero"),
        ({"tree": math.nan}, "finite"),
    ],
)
def test_bad_weights_raise(values, message):
    with pytest.raises(ValueError, match=message):
        DistanceWeights(**values)


def test_vectorised_similarity_equals_the_reference():
    rng = random.Random(2)
    relationships = random_relationships(rng, 150, bases=4)
    features = RelationshipFeatures.build(relationships)
    for weights in (DistanceWeights(), DistanceWeights(base=0.0, removed=3.0, tree=2.0, code=0.1)):
        rows = np.array(rng.sample(range(150), 70))
        cols = np.arange(150)
        similarity = features.similarity_block(rows, cols, weights)
        expected = np.array(
            [
                [
                    1.0 - relationship_distance(relationships[i], relationships[j], weights)
                    for j in cols
                ]
                for i in rows
            ]
        )
        np.testing.assert_allclose(similarity, expected, rtol=0, atol=1e-9)


def test_features_keep_ids_in_first_appearance_order():
    features = RelationshipFeatures.build([rel("b", code=NEGATION), rel("a"), rel("b")])
    assert features.base_keys == ("b", "a")
    assert features.base.tolist() == [0, 1, 0]
    assert features.code_keys == (NEGATION, LEXICAL)
    assert len(RelationshipFeatures.build([])) == 0


# select_diverse ------------------------------------------------------------------------------


def test_selects_k_distinct_per_original_in_first_appearance_order():
    rng = random.Random(3)
    pools = {"p": 7, "q": 2, "r": 3, "s": 1}
    relationships = [
        replace(r, base=key) for key, n in pools.items() for r in random_relationships(rng, n, 1)
    ]
    rng.shuffle(relationships)
    chosen = select_diverse_many(relationships, k=3)
    order = list(dict.fromkeys(r.base for r in relationships))
    assert list(chosen) == order
    for key, indices in chosen.items():
        assert len(indices) == min(3, pools[key])
        assert len(set(indices)) == len(indices)
        assert all(relationships[i].base == key for i in indices)
    assert select_diverse(relationships, k=3) == [i for key in order for i in chosen[key]]


def test_groups_override_the_original():
    relationships = PAPER_POOL * 2
    chosen = select_diverse_many(relationships, k=2, groups=["g1"] * 4 + ["g2"] * 4)
    assert chosen == {"g1": [0, 3], "g2": [4, 7]}


def test_ties_go_to_higher_fluency_then_to_input_order():
    duplicates = [MAN_WOMAN] * 4
    assert select_diverse(duplicates, k=3) == [0, 1, 2]
    assert select_diverse(duplicates, k=3, fluency=[0.1, 0.5, 0.5, 0.2]) == [1, 2, 3]
    lazy = select_diverse(duplicates, k=3, fluency=[0.1, 0.5, 0.5, 0.2], max_vectorised_pool=0)
    assert lazy == [1, 2, 3]


def test_fluency_does_not_override_a_larger_gain():
    assert select_diverse(PAPER_POOL, k=2, groups=["L"] * 4, fluency=[0, 9, 9, 0]) == [0, 3]


@pytest.mark.parametrize("n", [1, 2, 5, 10, 33, 300])
def test_lazy_greedy_equals_batched_greedy(n):
    rng = random.Random(n)
    relationships = []
    for pool in range(6):
        members = random_relationships(rng, n, 1)
        members += rng.sample(members, min(3, n))  # exact duplicates make exact ties
        relationships += [replace(r, base=f"p{pool}") for r in members]
    rng.shuffle(relationships)
    fluency = [float(rng.randint(0, 2)) for _ in relationships]
    for k, ties in ((3, None), (7, fluency)):
        batched = select_diverse_many(relationships, k, fluency=ties, max_vectorised_pool=10**6)
        lazy = select_diverse_many(relationships, k, fluency=ties, max_vectorised_pool=0)
        assert batched == lazy


def test_default_threshold_sends_large_pools_to_lazy_greedy_with_the_same_result():
    rng = random.Random(5)
    relationships = [replace(r, base="big") for r in random_relationships(rng, 400, 1)]
    relationships += random_relationships(rng, 40, bases=4)
    assert select_diverse_many(relationships, 4) == select_diverse_many(
        relationships, 4, max_vectorised_pool=10**6
    )


def test_batched_similarity_equals_similarity_block_with_many_distinct_tokens():
    # Pools of 40 over 400 words: about 100 distinct tokens per pool, so two or more
    # 64-bit words per candidate; tree stays under 64 labels and uses global ids.
    rng = random.Random(11)
    words = [f"w{i}" for i in range(400)]
    relationships = [
        rel(
            f"x{pool}",
            rng.sample(words, rng.randint(0, 4)),
            rng.sample(words, rng.randint(1, 4)),
            rng.sample("qrstu", 2),
            rng.choice([LEXICAL, NEGATION]),
        )
        for pool in range(5)
        for _ in range(40)
    ]
    features = RelationshipFeatures.build(relationships)
    order = np.arange(len(relationships))
    pools = selection._SortedPools(features, order, features.base, True, DistanceWeights())
    [(start, stop, n)] = list(pools.batches())
    batched = pools.similarity(start, stop, n)
    for pool in range(5):
        members = np.arange(pool * 40, (pool + 1) * 40)
        np.testing.assert_array_equal(batched[pool], features.similarity_block(members, members))


def test_huge_pools_compute_columns_on_demand_with_the_same_result(monkeypatch):
    rng = random.Random(9)
    relationships = random_relationships(rng, 120, bases=2)
    expected = select_diverse_many(relationships, 5, max_vectorised_pool=10**6)
    monkeypatch.setattr(selection, "_DENSE_ENTRIES", 0)
    assert select_diverse_many(relationships, 5, max_vectorised_pool=0) == expected


def test_greedy_is_within_one_minus_one_over_e_of_the_optimum():
    rng = random.Random(6)
    for trial in range(40):
        n = rng.randint(2, 8)
        relationships = random_relationships(rng, n, bases=2)
        k = rng.randint(1, min(3, n))
        chosen = select_diverse(relationships, k, groups=["one"] * n)
        assert len(chosen) == k
        similarity = RelationshipFeatures.build(relationships).similarity_block(
            np.arange(n), np.arange(n)
        )
        best = max(
            facility_location(similarity, subset) for subset in itertools.combinations(range(n), k)
        )
        assert facility_location(similarity, chosen) >= (1 - 1 / math.e) * best - 1e-12, trial


def test_features_can_be_built_once_and_reused():
    relationships = PAPER_POOL * 3
    features = RelationshipFeatures.build(relationships)
    assert select_diverse_many(features, 2) == select_diverse_many(relationships, 2)


def test_empty_input_returns_empty():
    assert select_diverse([]) == []
    assert select_diverse_many([], fluency=[]) == {}
    assert select_originals([], budget=5) == []


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: select_diverse(PAPER_POOL, k=0), "k must be at least 1"),
        (lambda: select_diverse(PAPER_POOL, fluency=[1.0]), "fluency has 1 values for 4"),
        (lambda: select_diverse(PAPER_POOL, fluency=[0, 0, math.inf, 0]), "finite"),
        (lambda: select_diverse(PAPER_POOL, groups=["a"]), "groups has 1 entries for 4"),
        (lambda: select_originals(PAPER_POOL, budget=-1), "budget must be non-negative"),
        (lambda: select_originals(PAPER_POOL, 2, priority=[1, -1, 1]), "non-negative"),
        (
            lambda: select_originals(PAPER_POOL, 2, priority=[1]),
            "priority has 1 values for 3 originals",
        ),
        (lambda: select_originals(PAPER_POOL, 2, priority={"a man walks": 1}), "no value"),
    ],
)
def test_bad_inputs_raise_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# select_originals ---------------------------------------------------------------------------

# Two originals with the same kind of change, one with another kind.
NOUN_SWAP_A = [
    rel("A", {"man"}, {"woman"}, {"nsubj:NOUN"}),
    rel("A", {"man"}, {"girl"}, {"nsubj:NOUN"}),
]
NOUN_SWAP_B = [
    rel("B", {"man"}, {"woman"}, {"nsubj:NOUN"}),
    rel("B", {"man"}, {"girl"}, {"nsubj:NOUN"}),
]
NEGATED_C = [rel("C", {"good"}, {"not", "good"}, {"neg:PART"}, NEGATION)]


def test_select_originals_covers_different_kinds_of_change_first():
    assert select_originals(NOUN_SWAP_A + NOUN_SWAP_B + NEGATED_C, budget=2) == ["A", "C"]


def test_select_originals_respects_the_budget():
    relationships = random_relationships(random.Random(7), 200, bases=30)
    originals = {r.base for r in relationships}
    for budget in (0, 1, 10, len(originals), len(originals) + 5):
        chosen = select_originals(relationships, budget)
        assert len(chosen) == min(budget, len(originals))
        assert len(set(chosen)) == len(chosen) and set(chosen) <= originals


def test_select_originals_puts_higher_priority_first():
    relationships = NOUN_SWAP_A + NOUN_SWAP_B + NEGATED_C
    assert select_originals(relationships, 1, priority={"A": 1.0, "B": 2.0, "C": 1.0}) == ["B"]
    assert select_originals(relationships, 1, priority=[1.0, 1.0, 5.0]) == ["C"]
    # Identical profiles: the tie goes to the higher priority, then to input order.
    assert select_originals(NOUN_SWAP_A + NOUN_SWAP_B, 2, priority=[1.0, 1.5]) == ["B", "A"]
    assert select_originals(NOUN_SWAP_A + NOUN_SWAP_B, 2) == ["A", "B"]


def test_all_zero_priority_means_no_priority():
    relationships = NOUN_SWAP_A + NOUN_SWAP_B + NEGATED_C
    assert select_originals(relationships, 3, priority=[0, 0, 0]) == select_originals(
        relationships, 3
    )


def test_select_originals_same_result_with_rows_on_demand(monkeypatch):
    relationships = random_relationships(random.Random(10), 300, bases=40)
    priority = [float(i % 3) for i in range(40)]
    expected = select_originals(relationships, 12, priority=priority)
    monkeypatch.setattr(selection, "_DENSE_ENTRIES", 0)
    assert select_originals(relationships, 12, priority=priority) == expected


def test_demand_sample_keeps_the_budget_and_is_seeded():
    relationships = random_relationships(random.Random(8), 300, bases=40)
    first = select_originals(relationships, 10, demand_sample=15, seed=3)
    assert len(first) == 10
    assert first == select_originals(relationships, 10, demand_sample=15, seed=3)


# The flip term (selection.md §2) ---------------------------------------------------------


def flip_pool():
    """Three near-copies that do not flip, and one outlier predicted to flip."""
    same = [rel("x", {"man"}, {"woman"}) for _ in range(3)]
    return [*same, rel("x", {"walks"}, {"sleeps"}, code=NEGATION)], [0.1, 0.1, 0.1, 0.9]


def test_without_flip_weight_predicted_flips_change_nothing():
    relationships, flip = flip_pool()
    plain = select_diverse_many(relationships, 1)
    assert select_diverse_many(relationships, 1, flip=flip, flip_weight=0.0) == plain
    assert plain == {"x": [0]}  # the most central candidate first


def test_flip_weight_makes_a_predicted_flip_win_over_a_central_candidate():
    relationships, flip = flip_pool()
    assert select_diverse_many(relationships, 1, flip=flip, flip_weight=1.0) == {"x": [3]}
    # A small weight does not outweigh covering three near-copies at once.
    assert select_diverse_many(relationships, 1, flip=flip, flip_weight=0.1) == {"x": [0]}


@pytest.mark.parametrize("n", [4, 12, 40])
def test_lazy_and_batched_greedy_agree_with_the_flip_term(n):
    rng = random.Random(n)
    relationships = []
    for pool in range(5):
        members = random_relationships(rng, n, 1)
        relationships += [replace(r, base=f"p{pool}") for r in members]
    flip = [rng.random() for _ in relationships]
    for weight in (0.25, 2.0):
        batched = select_diverse_many(
            relationships, 3, flip=flip, flip_weight=weight, max_vectorised_pool=10**6
        )
        lazy = select_diverse_many(
            relationships, 3, flip=flip, flip_weight=weight, max_vectorised_pool=0
        )
        assert batched == lazy


@pytest.mark.parametrize(
    "flip, weight, message",
    [
        ([0.5], -1.0, "flip_weight must be a finite non-negative"),
        ([0.5], math.inf, "flip_weight must be a finite non-negative"),
        ([1.5], 1.0, r"flip values must lie in \[0, 1\]"),
        ([0.5, 0.5], 1.0, "flip has 2 values for 1 relationships"),
    ],
)
def test_bad_flip_scores_or_weights_raise(flip, weight, message):
    with pytest.raises(ValueError, match=message):
        select_diverse_many([rel("x")], 1, flip=flip, flip_weight=weight)
