"""select_originals at scale: the similarity between originals bit for bit as before, the exact
greedy up to ORIGINALS_EXACT_MAX originals, and above it the partitioned greedy, whose cost
grows linearly with the originals and whose coverage stays close to the exact greedy's."""

import random

import numpy as np
import pytest

from bench.selection import BaselineProfiles
from generation import selection
from generation.selection import (
    DistanceWeights,
    RelationshipFeatures,
    _priorities,
    _Profiles,
    select_originals,
)
from tests.generation.test_selection import random_relationships, rel

WEIGHTS = DistanceWeights(base=1.0, removed=1.0, added=1.0, tree=0.5, code=1.0)


def reference_similarity(features: RelationshipFeatures, weights: DistanceWeights) -> np.ndarray:
    """S between all originals as the code before the partitioned greedy computed it: the
    benchmark's copy of that code (bench.selection.BaselineProfiles), every row at once."""
    everyone = np.arange(len(features.base_keys))
    return BaselineProfiles(features, weights, everyone).block(everyone)


def plain_greedy(similarity: np.ndarray, demand: np.ndarray, k: int) -> list[int]:
    """Greedy facility location with every gain recomputed at every step; ties to the higher
    demand weight, then to the lower index."""
    cover, chosen = np.zeros(similarity.shape[0]), []
    for _ in range(min(k, similarity.shape[0])):
        gains = (demand * np.maximum(similarity - cover, 0.0)).sum(axis=-1)
        gains[chosen] = -np.inf
        best = max(range(gains.size), key=lambda j: (gains[j], demand[j], -j))
        chosen.append(best)
        cover = np.maximum(cover, similarity[best])
    return chosen


def coverage(similarity: np.ndarray, demand: np.ndarray, chosen: list[int]) -> float:
    return float((demand * similarity[chosen].max(axis=0)).sum())


def corpus(originals: int, seed: int):
    relationships = random_relationships(random.Random(seed), originals * 3, bases=originals)
    rng = random.Random(seed + 1)
    priority = [rng.uniform(0.3, 1.0) for _ in range(len({r.base for r in relationships}))]
    return relationships, priority


@pytest.mark.parametrize("dense_factor", [True, False])
def test_similarity_between_originals_is_bit_for_bit_the_sparse_formula(monkeypatch, dense_factor):
    relationships, _ = corpus(60, seed=3)
    relationships += [rel("empty", code="insert"), rel("empty too", code="insert")]
    features = RelationshipFeatures.build(relationships)
    monkeypatch.setattr(selection, "_PROFILE_CHUNK_ENTRIES", 100)  # several chunks of rows
    if not dense_factor:
        monkeypatch.setattr(selection, "_DENSE_FACTOR_ENTRIES", 0)  # large-vocabulary path
    profiles = _Profiles(features, WEIGHTS)
    every = np.arange(profiles.size)
    expected = reference_similarity(features, WEIGHTS)
    assert np.array_equal(profiles.block(every, profiles.columns(every)), expected)
    empty, empty_too = features.base_keys.index("empty"), features.base_keys.index("empty too")
    some = np.array([5, 0, empty_too, 17])
    assert np.array_equal(profiles.block(some, profiles.columns(every[::2])), expected[some, ::2])
    assert expected[empty, empty_too] == 1.0  # nothing removed, nothing added: the same change


def test_up_to_the_exact_max_the_result_is_the_plain_greedy():
    relationships, priority = corpus(45, seed=4)
    features = RelationshipFeatures.build(relationships)
    demand = _priorities(priority, features.base_keys)
    expected = plain_greedy(reference_similarity(features, WEIGHTS), demand, 20)
    chosen = select_originals(features, 20, priority=priority, weights=WEIGHTS)
    assert chosen == [features.base_keys[j] for j in expected]


@pytest.fixture
def small_parts(monkeypatch):
    monkeypatch.setattr(selection, "ORIGINALS_EXACT_MAX", 30)


def test_above_the_exact_max_the_budget_is_kept_and_the_order_is_seeded(small_parts):
    relationships, priority = corpus(130, seed=5)
    features = RelationshipFeatures.build(relationships)
    keys = set(features.base_keys)
    for budget in (1, 7, 40, len(keys), len(keys) + 9):
        chosen = select_originals(features, budget, priority=priority, weights=WEIGHTS)
        assert len(chosen) == len(set(chosen)) == min(budget, len(keys))
        assert set(chosen) <= keys
    first = select_originals(features, 40, priority=priority, seed=2)
    assert first == select_originals(features, 40, priority=priority, seed=2)


def test_the_partitioned_greedy_covers_nearly_as_well_as_the_exact_one(small_parts):
    relationships, priority = corpus(150, seed=6)
    features = RelationshipFeatures.build(relationships)
    similarity = reference_similarity(features, WEIGHTS)
    demand = _priorities(priority, features.base_keys)
    index = {key: j for j, key in enumerate(features.base_keys)}
    for budget in (10, 40):
        exact = coverage(similarity, demand, plain_greedy(similarity, demand, budget))
        chosen = select_originals(features, budget, priority=priority, weights=WEIGHTS)
        random_pick = random.Random(0).sample(range(len(index)), budget)
        # Measured on this corpus: 0.986 (budget 10) and 0.991 (40); a random pick 0.939, 0.921.
        assert coverage(similarity, demand, [index[key] for key in chosen]) >= 0.97 * exact
        assert coverage(similarity, demand, random_pick) < 0.95 * exact


def test_an_original_of_far_higher_priority_comes_first_in_any_part(small_parts):
    relationships, priority = corpus(100, seed=7)
    keys = list(dict.fromkeys(r.base for r in relationships))
    for favourite in (keys[3], keys[77]):
        boosted = {
            key: 50.0 if key == favourite else value
            for key, value in zip(keys, priority, strict=True)
        }
        assert select_originals(relationships, 12, priority=boosted)[0] == favourite
        assert select_originals(relationships, 1, priority=boosted) == [favourite]


def test_the_partitioned_cost_grows_linearly_with_the_originals(monkeypatch, small_parts):
    """Similarity entries computed for a fixed budget: the exact greedy computes every pair,
    the partitioned one a part's pairs plus the cover of later parts."""
    computed = []
    block = _Profiles.block

    def counting(self, originals, columns):
        result = block(self, originals, columns)
        computed[-1] += result.size
        return result

    monkeypatch.setattr(_Profiles, "block", counting)
    for originals in (150, 300, 600):
        relationships, priority = corpus(originals, seed=8)
        computed.append(0)
        select_originals(relationships, 10, priority=priority, weights=WEIGHTS)
    assert computed[1] < 2.3 * computed[0] and computed[2] < 2.3 * computed[1]
    assert computed[2] < 600 * 600  # fewer than the exact greedy's initial gains alone
