"""Benchmark: batched diverse selection against per-original Python greedies.

Both run in this process on the same synthetic relationships (Polyjuice §4.1's r(x̂):
base, removed, added, tree, code) with the same weights and k. Ours is
`select_diverse_many`, timed as feature building plus selection. The baselines run
one original at a time on `relationship_distance`, on a sample of originals, and
their time is scaled to the full corpus (it is linear in the number of originals):

- polyjuice (the `ratio`): the structure of polyjuice-nlp's
  `select_diverse_perturbations`, the per-original Python greedy the issue names: every
  pairwise distance into a matrix, then each step takes the candidate with the largest
  mean distance to those chosen, one numpy call per candidate;
- max-min (`ratio_max_min`, a leaner greedy for comparison): each step takes the
  candidate whose smallest distance to those already chosen is largest, computing only
  the distances it needs.

    OMP_NUM_THREADS=1 python bench/selection.py           # 1,000,000 candidates
    python bench/selection.py --quick                     # 200,000; ~15 s on 2 cores

The last line reads `RESULT selection ratio=... seconds=... candidates=... originals=...`.

`--select-originals` measures the other selection, `select_originals` (which originals to
label first under a budget, selection.md §5), against the exact lazy greedy it ran before
the partitioned greedy (`baseline_select_originals`, kept here verbatim), in the same run on
the same synthetic originals (3 selected candidates each, priorities in [0.3, 1]):

    OMP_NUM_THREADS=1 python bench/selection.py --select-originals            # 15,000, budget 500
    python bench/selection.py --select-originals --originals 6000 --budget 2000

It prints both times, the coverage f(A) of each choice (and of a random choice and of the
highest priorities, for scale), and `RESULT select_originals ratio=... seconds=... ...`.
"""

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # one core, before numpy loads

import argparse  # noqa: E402
import itertools  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # before bench/, whose generation.py would shadow the package

from scipy import sparse  # noqa: E402

from generation.relationship import Relationship  # noqa: E402
from generation.selection import (  # noqa: E402
    DEFAULT_WEIGHTS,
    RelationshipFeatures,
    _Profiles,
    _row_sizes,
    _SimilarityRows,
    _weighted_jaccard,
    lazy_greedy,
    relationship_distance,
    select_diverse_many,
    select_originals,
)

VOCABULARY = 5_000
TREE_LABELS = [
    f"{dep}:{pos}"
    for dep, pos in itertools.product(
        ("nsubj", "dobj", "amod", "advmod", "pobj", "prep", "ROOT", "neg"),
        ("NOUN", "VERB", "ADJ", "ADV", "PART"),
    )
]  # 40 "dep:POS" strings
CODES = (
    "lexical",
    "resemantic",
    "negation",
    "quantifier",
    "insert",
    "delete",
    "restructure",
    "shuffle",
)
CODE_SHARES = (0.35, 0.25, 0.1, 0.08, 0.08, 0.07, 0.05, 0.02)


def synthetic_relationships(originals: int, per_original: int, seed: int):
    """r(x̂) for `per_original` candidates of each of `originals` sentences, plus fluency.

    Each original is a 8-20 word sentence drawn from a Zipf vocabulary; a candidate
    removes a span of 1-3 of its words and adds 1-4 Zipf words, with 1-3 tree labels
    and one of the 8 codes. Candidates of one original are contiguous.
    """
    rng = np.random.default_rng(seed)
    words = [f"w{index}" for index in range(VOCABULARY)]
    zipf = 1.0 / np.arange(1, VOCABULARY + 1) ** 1.07
    zipf /= zipf.sum()
    label_share = 1.0 / np.arange(1, len(TREE_LABELS) + 1)
    label_share /= label_share.sum()
    n = originals * per_original

    lengths = rng.integers(8, 21, originals)
    sentences = rng.choice(VOCABULARY, size=(originals, 20), p=zipf)
    removed_count = rng.integers(1, 4, n)
    start = (rng.random(n) * (np.repeat(lengths, per_original) - removed_count + 1)).astype(int)
    added_count = rng.integers(1, 5, n)
    added = rng.choice(VOCABULARY, size=(n, 4), p=zipf)
    tree_count = rng.integers(1, 4, n)
    trees = rng.choice(len(TREE_LABELS), size=(n, 3), p=label_share)
    codes = rng.choice(len(CODES), size=n, p=CODE_SHARES)
    fluency = rng.normal(-2.0, 3.0, n)

    relationships = []
    for original in range(originals):
        base = f"orig-{original}"
        sentence = [words[w] for w in sentences[original].tolist()]
        for index in range(original * per_original, (original + 1) * per_original):
            first = start[index]
            relationships.append(
                Relationship(
                    base=base,
                    removed=frozenset(sentence[first : first + removed_count[index]]),
                    added=frozenset(words[w] for w in added[index, : added_count[index]]),
                    tree=frozenset(TREE_LABELS[t] for t in trees[index, : tree_count[index]]),
                    code=CODES[codes[index]],
                )
            )
    return relationships, fluency.tolist()


def pools_of(relationships) -> dict[str, list[int]]:
    pools: dict[str, list[int]] = {}
    for index, relationship in enumerate(relationships):
        pools.setdefault(relationship.base, []).append(index)
    return pools


def baseline_max_min(relationships, pools, k, weights) -> dict[str, list[int]]:
    """Per original: start from the first candidate, then repeatedly the farthest one."""
    chosen_by_pool = {}
    for key, pool in pools.items():
        chosen = [pool[0]]
        remaining = pool[1:]
        while len(chosen) < k and remaining:
            best, best_distance = remaining[0], -1.0
            for candidate in remaining:
                distance = min(
                    relationship_distance(relationships[candidate], relationships[other], weights)
                    for other in chosen
                )
                if distance > best_distance:
                    best, best_distance = candidate, distance
            chosen.append(best)
            remaining.remove(best)
        chosen_by_pool[key] = chosen
    return chosen_by_pool


def baseline_polyjuice(relationships, pools, k, weights) -> dict[str, list[int]]:
    """Per original: all pairwise distances, then greedy on the mean distance to the chosen.

    The first step's mean over nothing is taken as 0 (polyjuice-nlp gets NaN and a warning
    per candidate, which would only slow this baseline down)."""
    chosen_by_pool = {}
    for key, pool in pools.items():
        n = len(pool)
        distances = np.zeros((n, n))
        for i, j in itertools.combinations(range(n), 2):
            distance = relationship_distance(
                relationships[pool[i]], relationships[pool[j]], weights
            )
            distances[i, j] = distances[j, i] = distance
        chosen: list[int] = []
        items = list(range(n))
        while len(chosen) < min(k, n):
            best, best_gain = items[0], 0.0
            for item in items:
                gain = float(np.mean(distances[item, chosen])) if chosen else 0.0
                if gain > best_gain:
                    best, best_gain = item, gain
            chosen.append(best)
            items.remove(best)
        chosen_by_pool[key] = [pool[i] for i in chosen]
    return chosen_by_pool


def quality(features, pools, chosen_by_pool, weights) -> tuple[float, float]:
    """Mean over originals of f(A)/n (facility location) and of the smallest D_L in A."""
    coverage, spread = [], []
    for key, pool in pools.items():
        chosen = chosen_by_pool[key]
        similarity = features.similarity_block(np.array(pool), np.array(chosen), weights)
        coverage.append(similarity.max(axis=1).mean())
        inner = 1.0 - features.similarity_block(np.array(chosen), np.array(chosen), weights)
        spread.append(inner[np.triu_indices(len(chosen), 1)].min())
    return float(np.mean(coverage)), float(np.mean(spread))


def best_of(repeats: int, run):
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - started)
    return min(times), result


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="200,000 candidates, small sample")
    parser.add_argument("--originals", type=int, default=None)
    parser.add_argument("--per-original", type=int, default=10)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--sample", type=int, default=None, help="originals the baselines run")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--select-originals",
        action="store_true",
        help="time select_originals against the exact greedy it replaced above 2,896 originals",
    )
    parser.add_argument("--budget", type=int, default=500, help="with --select-originals")
    return parser.parse_args()


def ours_measure(relationships, fluency, k: int, repeats: int, originals: int, per_original: int):
    """Ours: features once, then selection; both timed, best of `repeats`, checked and
    printed: (build seconds, select seconds, the features, the choice by original)."""
    build_s, features = best_of(repeats, lambda: RelationshipFeatures.build(relationships))
    select_s, chosen = best_of(
        repeats, lambda: select_diverse_many(features, k, weights=DEFAULT_WEIGHTS, fluency=fluency)
    )
    ours_s = build_s + select_s
    assert len(chosen) == originals and all(len(c) == min(k, per_original) for c in chosen.values())
    n = len(relationships)
    print(
        f"ours: build {build_s:.3f} s + select {select_s:.3f} s = {ours_s:.3f} s "
        f"({n / ours_s:,.0f} candidates/s)"
    )
    return build_s, select_s, features, chosen


def baselines_measure(relationships, originals: int, sample: int, k: int, repeats: int, seed: int):
    """Both baselines on a sample of originals, best of `repeats` too, scaled to all of them
    and printed: (the sampled pools, max-min seconds and choice, polyjuice's seconds and
    choice)."""
    weights = DEFAULT_WEIGHTS
    rng = np.random.default_rng(seed + 1)
    all_pools = pools_of(relationships)
    keys = list(all_pools)
    sampled = {keys[i]: all_pools[keys[i]] for i in sorted(rng.choice(originals, sample, False))}
    scale = originals / sample
    max_min_s, max_min = best_of(
        repeats, lambda: baseline_max_min(relationships, sampled, k, weights)
    )
    polyjuice_s, polyjuice = best_of(
        repeats, lambda: baseline_polyjuice(relationships, sampled, k, weights)
    )
    max_min_s, polyjuice_s = max_min_s * scale, polyjuice_s * scale
    print(
        f"baseline max-min:   {max_min_s:.2f} s for {originals:,} originals "
        f"(measured on {sample:,}, extrapolated x{scale:.1f})"
    )
    print(
        f"baseline polyjuice: {polyjuice_s:.2f} s for {originals:,} originals "
        f"(measured on {sample:,}, extrapolated x{scale:.1f})"
    )
    return sampled, max_min_s, max_min, polyjuice_s, polyjuice


def quality_print(features, sampled, picks_by_name: dict) -> None:
    """Coverage and spread of each side's choice on the sampled originals."""
    for name, picks in picks_by_name.items():
        coverage, spread = quality(features, sampled, picks, DEFAULT_WEIGHTS)
        print(
            f"quality {name:9s}: facility location f(A)/n {coverage:.4f}, min D_L in A {spread:.4f}"
        )


# select_originals ---------------------------------------------------------------------------


class BaselineProfiles:
    """generation.selection._Profiles before the partitioned greedy: S between originals from
    sparse products of their unions, columns fixed to the demand originals."""

    def __init__(self, features: RelationshipFeatures, weights, demand):
        originals = len(features.base_keys)
        membership = sparse.csr_array(
            (np.ones(len(features), dtype=np.int32), (features.base, np.arange(len(features)))),
            shape=(originals, len(features)),
        )
        codes = sparse.csr_array(
            (np.ones(len(features), dtype=np.int32), (np.arange(len(features)), features.code)),
            shape=(len(features), len(features.code_keys)),
        )
        self.demand = demand
        self.components = []
        for matrix, weight in (
            (features.removed, weights.removed),
            (features.added, weights.added),
            (features.tree, weights.tree),
            (codes, weights.code),
        ):
            if weight:
                union = (membership @ matrix).tocsr()
                union.data[:] = 1
                of_demand = union[demand]
                self.components.append(
                    (union, of_demand.T.tocsr(), _row_sizes(of_demand)[None, :], weight)
                )
        self.total = sum(component[-1] for component in self.components)

    def block(self, originals: np.ndarray) -> np.ndarray:
        if not self.components:
            return (originals[:, None] == self.demand[None, :]).astype(np.float64)
        similarity = np.zeros((originals.size, self.demand.size))
        for matrix, demand_transposed, demand_sizes, weight in self.components:
            rows = matrix[originals]
            intersection = (rows @ demand_transposed).toarray()
            union = _row_sizes(rows)[:, None] + demand_sizes - intersection
            similarity += _weighted_jaccard(intersection, union, weight)
        similarity /= self.total
        return similarity


def baseline_select_originals(features: RelationshipFeatures, budget: int, priority, weights):
    """select_originals before the partitioned greedy: the exact lazy greedy over every
    original, S recomputed row by row once it exceeds 2^23 entries (as indices)."""
    demand = np.arange(len(features.base_keys))
    profiles = BaselineProfiles(features, weights, demand)
    columns = _SimilarityRows(profiles.block, demand.size, demand.size)
    gains = columns.initial_gains(priority)
    return lazy_greedy(gains, columns, budget, priority, priority)


def synthetic_originals(originals: int, seed: int):
    """Three selected candidates per original (the campaign default) and a priority in
    [0.3, 1] each, as the scale copy's model-in-the-loop priorities range."""
    relationships, _ = synthetic_relationships(originals, 3, seed)
    priority = np.random.default_rng(seed + 2).uniform(0.3, 1.0, originals)
    return relationships, priority


def coverage_of(profiles: _Profiles, priority: np.ndarray, chosen) -> float:
    """f(A) = Σ_i p_i max_{a ∈ A} S_ia over every original."""
    every = profiles.columns(np.arange(profiles.size))
    chosen = np.asarray(chosen)
    cover = np.zeros(profiles.size)
    for start in range(0, chosen.size, 64):
        cover = np.maximum(cover, profiles.block(chosen[start : start + 64], every).max(axis=0))
    return float((priority * cover).sum())


def main_select_originals(args: argparse.Namespace) -> None:
    originals = args.originals or 15_000
    relationships, priority = synthetic_originals(originals, args.seed)
    features = RelationshipFeatures.build(relationships)
    keys = features.base_keys
    index = {key: position for position, key in enumerate(keys)}
    print(
        f"data: {len(relationships):,} relationships over {originals:,} originals (3 each), "
        f"budget {args.budget:,}"
    )
    repeats = args.repeats or 1
    ours_s, ours = best_of(
        repeats, lambda: select_originals(features, args.budget, priority=priority)
    )
    print(f"ours (partitioned greedy above 2,896 originals): {ours_s:.3f} s")
    baseline_s, baseline = best_of(
        1, lambda: baseline_select_originals(features, args.budget, priority, DEFAULT_WEIGHTS)
    )
    print(f"baseline (exact lazy greedy, as before): {baseline_s:.3f} s")

    profiles = _Profiles(features, DEFAULT_WEIGHTS)
    exact = coverage_of(profiles, priority, baseline)
    shares = {
        "ours": coverage_of(profiles, priority, [index[key] for key in ours]) / exact,
        "random": coverage_of(
            profiles,
            priority,
            np.random.default_rng(args.seed).choice(originals, args.budget, replace=False),
        )
        / exact,
        "top priority": coverage_of(
            profiles, priority, np.argsort(-priority, kind="stable")[: args.budget]
        )
        / exact,
    }
    overlap = len(set(ours) & {keys[j] for j in baseline}) / len(baseline)
    print(
        "coverage f(A) / the exact greedy's: "
        + ", ".join(f"{name} {share:.4f}" for name, share in shares.items())
        + f"; chosen in both {overlap:.3f}"
    )
    ratio = baseline_s / ours_s
    print(f"speed-up: {ratio:.1f}x")
    print(
        f"RESULT select_originals ratio={ratio:.2f} seconds={ours_s:.3f} "
        f"baseline_s={baseline_s:.3f} originals={originals} budget={args.budget} "
        f"coverage={shares['ours']:.4f} coverage_random={shares['random']:.4f} "
        f"coverage_top_priority={shares['top priority']:.4f} overlap={overlap:.3f}"
    )


def main() -> None:
    args = arguments()
    if args.select_originals:
        main_select_originals(args)
        return
    originals = args.originals or (20_000 if args.quick else 100_000)
    sample = min(originals, args.sample or (1_000 if args.quick else 3_000))
    repeats = args.repeats or 3
    full_candidates = 100_000 * args.per_original

    started = time.perf_counter()
    relationships, fluency = synthetic_relationships(originals, args.per_original, args.seed)
    n = len(relationships)
    print(
        f"data: {n:,} candidates over {originals:,} originals "
        f"({args.per_original} each), k={args.k}, built in {time.perf_counter() - started:.1f} s"
    )

    build_s, select_s, features, chosen = ours_measure(
        relationships, fluency, args.k, repeats, originals, args.per_original
    )
    ours_s = build_s + select_s
    sampled, max_min_s, max_min, polyjuice_s, polyjuice = baselines_measure(
        relationships, originals, sample, args.k, repeats, args.seed
    )
    ours_sampled = {key: chosen[key] for key in sampled}
    quality_print(
        features, sampled, {"ours": ours_sampled, "max-min": max_min, "polyjuice": polyjuice}
    )

    ratio = polyjuice_s / ours_s
    ratio_select = polyjuice_s / select_s
    ratio_max_min = max_min_s / ours_s
    seconds = ours_s * full_candidates / n
    extrapolated = n != full_candidates
    print(
        f"speed-up vs polyjuice: {ratio:.1f}x end to end, {ratio_select:.1f}x selection only "
        f"(features prebuilt); vs max-min: {ratio_max_min:.1f}x end to end"
    )
    print(
        f"full size ({full_candidates:,} candidates): {seconds:.2f} s"
        + (" (extrapolated linearly from this run)" if extrapolated else " (measured)")
    )
    print(
        f"RESULT selection ratio={ratio:.2f} seconds={seconds:.3f} candidates={n} "
        f"originals={originals} ratio_select={ratio_select:.2f} "
        f"ratio_max_min={ratio_max_min:.2f} build_s={build_s:.4f} select_s={select_s:.4f} "
        f"baseline_s={polyjuice_s:.3f} max_min_s={max_min_s:.3f} sample={sample} "
        f"extrapolated={int(extrapolated)}"
    )


if __name__ == "__main__":
    main()
