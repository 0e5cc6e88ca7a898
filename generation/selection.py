"""Chooses diverse counterfactuals by submodular maximisation over relationship distance
(Polyjuice §4.1).

The design, with the objective, the tie rules and the costs, is in `selection.md`.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, count
from operator import attrgetter

import numpy as np
from scipy import sparse

from generation.relationship import Relationship

# Pools up to this size go through the batched greedy (all pools of one size at once);
# larger ones through lazy greedy, whose heap skips most gain evaluations.
VECTORISED_MAX_POOL = 256
# Similarity entries per batch of pools: bounds the batched path's memory (~8 bytes each,
# a few temporaries) whatever the corpus size.
_BATCH_ENTRIES = 1 << 20
# Lazy greedy keeps the whole S (8 bytes an entry: 64 MiB) up to this many entries.
_DENSE_ENTRIES = 1 << 23
_SET_COMPONENTS = ("removed", "added", "tree")
# λ of the flip term (selection.md §2) where a campaign wants label flips: the default of
# `Campaign.flip_weight`, measured in docs/generation-quality.md.
DEFAULT_FLIP_WEIGHT = 0.5


@dataclass(frozen=True)
class DistanceWeights:
    """Weights of D_L's components. The defaults are `Campaign.weight_*`; selection.md §1
    says why each has its value."""

    base: float = 1.0  # a different original: another region of the decision boundary
    removed: float = 1.0  # what was taken out of x: the feature the label may hinge on
    added: float = 1.0  # what replaced it
    tree: float = 0.5  # half: the phrase roots mostly follow from removed and added
    code: float = 1.0  # the kind of change (Table 1)

    def __post_init__(self) -> None:
        values = self.as_dict()
        bad = {name: value for name, value in values.items() if not math.isfinite(value)}
        if bad:
            raise ValueError(f"distance weights must be finite numbers, got {bad}")
        negative = {name: value for name, value in values.items() if value < 0}
        if negative:
            raise ValueError(f"distance weights must be non-negative, got {negative}")
        if self.total == 0:
            raise ValueError("distance weights are all zero: at least one must be positive")

    def as_dict(self) -> dict[str, float]:
        return {
            "base": self.base,
            "removed": self.removed,
            "added": self.added,
            "tree": self.tree,
            "code": self.code,
        }

    @property
    def total(self) -> float:
        return self.base + self.removed + self.added + self.tree + self.code


DEFAULT_WEIGHTS = DistanceWeights()


# 1. The distance, plainly ---------------------------------------------------------------


def relationship_distance(
    a: Relationship, b: Relationship, weights: DistanceWeights = DEFAULT_WEIGHTS
) -> float:
    """D_L(r(x̂_a), r(x̂_b)) in [0, 1]: the weighted mean of the component distances.

    The reference the vectorised code is tested against; one pair at a time.
    """
    distance = (
        weights.base * (a.base != b.base)
        + weights.removed * _jaccard_distance(a.removed, b.removed)
        + weights.added * _jaccard_distance(a.added, b.added)
        + weights.tree * _jaccard_distance(a.tree, b.tree)
        + weights.code * (a.code != b.code)
    )
    return distance / weights.total


def _jaccard_distance(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return 1.0 - len(a & b) / union if union else 0.0  # two empty sets are the same change


# 2. The distance, vectorised --------------------------------------------------------------


@dataclass(frozen=True, eq=False)  # arrays inside: compare by identity
class RelationshipFeatures:
    """Many relationships as arrays: one binary CSR matrix per set component (row = candidate,
    column = token or tree label), integer ids for base and code."""

    removed: sparse.csr_array  # (n, |removed vocabulary|), int32 ones
    added: sparse.csr_array
    tree: sparse.csr_array
    base: np.ndarray  # (n,) int64 ids into base_keys, numbered by first appearance
    code: np.ndarray  # (n,) int64 ids into code_keys
    base_keys: tuple[str, ...]
    code_keys: tuple[str, ...]

    @classmethod
    def build(cls, relationships: Sequence[Relationship]) -> RelationshipFeatures:
        relationships = list(relationships)
        base, base_keys = _ids(list(map(attrgetter("base"), relationships)))
        code, code_keys = _ids(list(map(attrgetter("code"), relationships)))
        return cls(
            removed=_set_matrix(list(map(attrgetter("removed"), relationships))),
            added=_set_matrix(list(map(attrgetter("added"), relationships))),
            tree=_set_matrix(list(map(attrgetter("tree"), relationships))),
            base=base,
            code=code,
            base_keys=base_keys,
            code_keys=code_keys,
        )

    def __len__(self) -> int:
        return self.base.size

    def similarity_block(
        self, rows: np.ndarray, cols: np.ndarray, weights: DistanceWeights = DEFAULT_WEIGHTS
    ) -> np.ndarray:
        """Dense S = 1 - D_L between candidates `rows` and `cols`: (len(rows), len(cols))."""
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        jaccards = []
        for name in _SET_COMPONENTS:
            weight = getattr(weights, name)
            if weight == 0:
                continue
            matrix = getattr(self, name)
            a, b = matrix[rows], matrix[cols]
            intersection = (a @ b.T).toarray()  # |a ∩ b| for every pair, no loop over pairs
            union = _row_sizes(a)[:, None] + _row_sizes(b)[None, :] - intersection
            jaccards.append(_weighted_jaccard(intersection, union, weight))
        same_base = self.base[rows][:, None] == self.base[cols][None, :]
        same_code = self.code[rows][:, None] == self.code[cols][None, :]
        return _similarity(weights, (rows.size, cols.size), same_base, same_code, jaccards)


def _ids(values: list[str]) -> tuple[np.ndarray, tuple[str, ...]]:
    """Integer ids numbered by first appearance, and the values in id order."""
    positions, vocabulary = _first_positions(values, len(values))
    return _compact(positions), tuple(vocabulary)


def _set_matrix(sets: list[frozenset[str]]) -> sparse.csr_array:
    sizes = np.fromiter(map(len, sets), dtype=np.int64, count=len(sets))
    indptr = np.zeros(len(sets) + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    positions, _ = _first_positions(chain.from_iterable(sets), int(indptr[-1]))
    columns = _compact(positions)
    shape = (len(sets), int(columns.max(initial=-1)) + 1)
    data = np.ones(columns.size, dtype=np.int32)
    return sparse.csr_array((data, columns.astype(np.int32), indptr), shape=shape)


def _first_positions(values, size: int) -> tuple[np.ndarray, dict]:
    # One dict lookup per value, all in C: setdefault returns the position where the value
    # first appeared, which _compact turns into 0, 1, 2, ... in order of appearance.
    vocabulary: dict = {}
    positions = map(vocabulary.setdefault, values, count())
    return np.fromiter(positions, dtype=np.int64, count=size), vocabulary


def _compact(first_positions: np.ndarray) -> np.ndarray:
    is_first = first_positions == np.arange(first_positions.size)
    return (np.cumsum(is_first) - 1)[first_positions]


def _row_sizes(matrix: sparse.csr_array) -> np.ndarray:
    return np.diff(matrix.indptr)


def _weighted_jaccard(intersection: np.ndarray, union: np.ndarray, weight: float) -> np.ndarray:
    """weight · Jaccard(a, b) from the counts; two empty sets count as identical."""
    share = np.ones(intersection.shape)
    np.divide(intersection, union, out=share, where=union > 0)
    share *= weight
    return share


def _similarity(
    weights: DistanceWeights,
    shape: tuple[int, ...],
    same_base: np.ndarray | bool,
    same_code: np.ndarray,
    jaccards: list[np.ndarray],
) -> np.ndarray:
    """S = 1 - D_L from its parts. Every path builds S here, in this order, so the batched and
    the lazy greedy see bit-identical similarities and break ties identically."""
    similarity = np.zeros(shape)
    if weights.base:
        np.add(similarity, weights.base, out=similarity, where=same_base)
    for jaccard in jaccards:
        similarity += jaccard
    if weights.code:
        np.add(similarity, weights.code, out=similarity, where=same_code)
    similarity /= weights.total
    return similarity


# 3. Greedy facility location ---------------------------------------------------------------


def lazy_greedy(
    initial_gains: np.ndarray,
    columns: Callable[[np.ndarray], np.ndarray],
    k: int,
    tiebreak: np.ndarray,
    demand: np.ndarray | None = None,
    refresh: int = 16,
    bonus: np.ndarray | None = None,
) -> list[int]:
    """Greedy maximisation of f(A) = Σ_i demand_i · max_{j ∈ A} S_ij with Minoux's heap of
    stale gains. `columns(js)` is S[:, js] transposed, one row per j; `initial_gains` are
    f({j}). Ties go to the higher `tiebreak`, then to the lower index. Returns up to k
    indices in selection order.

    A stale top is re-evaluated together with up to `refresh` - 1 stale entries under it, in
    one `columns` call: more exact gains than Minoux's one-at-a-time, so the same choices,
    for far fewer calls when a call has a fixed cost (sparse products).

    `bonus`, one value per j added to each of its gains (and already in `initial_gains`), is
    a modular term: with bonus ≥ 0, f stays monotone submodular and stale gains bounds."""
    # cover_i = max_{j ∈ A} S_ij, 0 for A = ∅ as S ≥ 0. Step 0 always takes the heap's top, a
    # fresh f({j}), so cover starts as that column: it need not be square (demand_sample).
    cover = np.zeros(0)
    heap = [
        (-gain, -tie, j)
        for j, (gain, tie) in enumerate(zip(initial_gains.tolist(), tiebreak.tolist(), strict=True))
    ]
    heapq.heapify(heap)
    evaluated_at = [0] * initial_gains.size  # len(chosen) when each gain was computed
    chosen: list[int] = []
    while heap and len(chosen) < k:
        j = heap[0][2]
        if evaluated_at[j] == len(chosen):
            # Fresh, and no stale upper bound beats it: it is the exact argmax.
            heapq.heappop(heap)
            column = columns(np.array([j]))[0]
            cover = column if not chosen else np.maximum(cover, column)
            chosen.append(j)
            continue
        stale = []
        while heap and len(stale) < refresh and evaluated_at[heap[0][2]] != len(chosen):
            stale.append(heapq.heappop(heap))
        covered = np.maximum(columns(np.array([entry[2] for entry in stale])) - cover, 0.0)
        gains = (covered if demand is None else demand * covered).sum(axis=-1)
        if bonus is not None:
            gains = gains + bonus[[entry[2] for entry in stale]]
        for (_, negative_tie, j), gain in zip(stale, gains.tolist(), strict=True):
            evaluated_at[j] = len(chosen)
            heapq.heappush(heap, (-gain, negative_tie, j))
    return chosen


def _batched_greedy(
    similarity: np.ndarray,
    k: int,
    tiebreak: np.ndarray | None,
    bonus: np.ndarray | None = None,
) -> np.ndarray:
    """Plain greedy with exact gains for B pools of n at once: similarity (B, n, n), symmetric.

    Returns (B, min(k, n)) local indices in selection order. Same choices as lazy_greedy:
    gains are summed over contiguous rows exactly as lazy_greedy sums a column.
    """
    pools, n, _ = similarity.shape
    steps = min(k, n)
    picks = np.empty((pools, steps), dtype=np.int64)
    cover = np.zeros((pools, n))
    taken = np.zeros((pools, n), dtype=bool)
    every = np.arange(pools)
    scratch = np.empty_like(similarity)
    for step in range(steps):
        if step == 0:
            gains = similarity.sum(axis=-1)  # = max(S - 0, 0) summed: S ≥ 0
        else:
            np.subtract(similarity, cover[:, None, :], out=scratch)
            np.maximum(scratch, 0.0, out=scratch)
            gains = scratch.sum(axis=-1)
        if bonus is not None:
            gains = gains + bonus  # (B, n): the modular flip term, selection.md §2
        gains[taken] = -np.inf
        tied = gains == gains.max(axis=1, keepdims=True)
        if tiebreak is not None:
            ties = np.where(tied, tiebreak, -np.inf)
            tied &= ties == ties.max(axis=1, keepdims=True)
        pick = tied.argmax(axis=1)  # first True: the lowest index among the tied
        picks[:, step] = pick
        taken[every, pick] = True
        if step + 1 < steps:
            np.maximum(cover, similarity[every, pick], out=cover)
    return picks


# 4. Selection per original ------------------------------------------------------------------


def select_diverse(
    relationships: Sequence[Relationship] | RelationshipFeatures,
    k: int = 3,
    *,
    weights: DistanceWeights = DEFAULT_WEIGHTS,
    fluency: Sequence[float] | None = None,
    groups: Sequence[str] | None = None,
    max_vectorised_pool: int = VECTORISED_MAX_POOL,
    flip: Sequence[float] | None = None,
    flip_weight: float = 0.0,
) -> list[int]:
    """Up to k indices per group (default: per original, `Relationship.base`) chosen by greedy
    facility location on S = 1 - D_L; pools in order of first appearance, each pool's indices
    in selection order. `fluency` (e.g. `FluencyScore.full`, higher first) breaks ties."""
    chosen = select_diverse_many(
        relationships,
        k,
        weights=weights,
        fluency=fluency,
        groups=groups,
        max_vectorised_pool=max_vectorised_pool,
        flip=flip,
        flip_weight=flip_weight,
    )
    return [index for indices in chosen.values() for index in indices]


def select_diverse_many(
    relationships: Sequence[Relationship] | RelationshipFeatures,
    k: int = 3,
    *,
    weights: DistanceWeights = DEFAULT_WEIGHTS,
    fluency: Sequence[float] | None = None,
    groups: Sequence[str] | None = None,
    max_vectorised_pool: int = VECTORISED_MAX_POOL,
    flip: Sequence[float] | None = None,
    flip_weight: float = 0.0,
) -> dict[str, list[int]]:
    """{group: chosen indices in selection order}, groups in order of first appearance.

    Pools of up to `max_vectorised_pool` candidates are stacked by size into (B, n, n)
    similarity blocks and selected together; larger pools go through lazy_greedy.
    `flip` (each candidate's predicted chance of the label it should reach, in [0, 1])
    with `flip_weight` λ > 0 adds λ · n · flip_j to every gain of j in a pool of n: the
    modular flip term of selection.md §2.
    """
    # 1. Validate and vectorise.
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    features = (
        relationships
        if isinstance(relationships, RelationshipFeatures)
        else RelationshipFeatures.build(relationships)
    )
    size = len(features)
    tiebreak = _checked_scores(fluency, size, "fluency")
    flips = _flip_scores(flip, flip_weight, size)
    if groups is None:
        group_ids, group_keys = features.base, features.base_keys
    else:
        if len(groups) != size:
            raise ValueError(f"groups has {len(groups)} entries for {size} relationships")
        group_ids, group_keys = _ids(list(groups))
    if size == 0:
        return {}

    # 2. Order candidates by (pool size, pool), input order kept inside a pool.
    pool_sizes = np.bincount(group_ids)
    order = np.argsort(pool_sizes[group_ids] * len(group_keys) + group_ids, kind="stable")
    sorted_sizes = pool_sizes[group_ids[order]]
    small = int(np.searchsorted(sorted_sizes, max_vectorised_pool, side="right"))
    picks = np.full((len(group_keys), min(k, int(pool_sizes.max()))), -1, dtype=np.int64)

    # 3. Small pools: batched exact greedy.
    if small:
        pools = _SortedPools(features, order[:small], group_ids, groups is None, weights)
        for start, stop, n in pools.batches():
            similarity = pools.similarity(start, stop, n)
            rows = order[start:stop].reshape(-1, n)
            ties = None if tiebreak is None else tiebreak[rows]
            bonus = None if flips is None else flip_weight * n * flips[rows]
            local = _batched_greedy(similarity, k, ties, bonus)
            chosen = np.take_along_axis(rows, local, axis=1)
            picks[group_ids[rows[:, 0]], : local.shape[1]] = chosen

    # 4. Large pools: lazy greedy, one pool at a time.
    rest = order[small:]
    cuts = np.flatnonzero(np.diff(group_ids[rest])) + 1
    for pool in np.split(rest, cuts) if rest.size else []:
        bonus = None if flips is None else flip_weight * pool.size * flips[pool]
        local = _lazy_pool(features, pool, k, weights, tiebreak, bonus)
        picks[group_ids[pool[0]], : len(local)] = pool[local]

    # 5. Back to keys; only pools smaller than k have padding to strip.
    lists = picks.tolist()
    for short in np.flatnonzero(pool_sizes < picks.shape[1]).tolist():
        lists[short] = lists[short][: pool_sizes[short]]
    return dict(zip(group_keys, lists, strict=True))


def _checked_scores(
    scores: Sequence[float] | None, size: int, name: str, of: str = "relationships"
) -> np.ndarray | None:
    if scores is None:
        return None
    if len(scores) != size:
        raise ValueError(f"{name} has {len(scores)} values for {size} {of}")
    array = np.asarray(scores, dtype=np.float64)
    if not np.isfinite(array).all():
        raise ValueError(f"{name} values must be finite numbers")
    return array


def _flip_scores(flip: Sequence[float] | None, weight: float, size: int) -> np.ndarray | None:
    """The checked flip scores, or None when the flip term is off (no scores, or λ = 0)."""
    if not math.isfinite(weight) or weight < 0:
        raise ValueError(f"flip_weight must be a finite non-negative number, got {weight}")
    scores = _checked_scores(flip, size, "flip")
    if scores is None or weight == 0:
        return None
    if ((scores < 0) | (scores > 1)).any():
        raise ValueError("flip values must lie in [0, 1] (a predicted probability)")
    return scores


def _lazy_pool(
    features: RelationshipFeatures,
    pool: np.ndarray,
    k: int,
    weights: DistanceWeights,
    tiebreak: np.ndarray | None,
    bonus: np.ndarray | None = None,
) -> list[int]:
    def block(rows: np.ndarray) -> np.ndarray:
        return features.similarity_block(pool[rows], pool, weights)  # symmetric: rows = columns

    columns = _SimilarityRows(block, pool.size, pool.size)
    ties = np.zeros(pool.size) if tiebreak is None else tiebreak[pool]
    gains = columns.initial_gains()
    if bonus is not None:
        gains = gains + bonus
    return lazy_greedy(gains, columns, k, ties, bonus=bonus)


class _SimilarityRows:
    """The rows S[j, :] lazy_greedy asks for: S kept whole when it has at most _DENSE_ENTRIES
    entries, else recomputed on demand; the initial gains in row chunks either way."""

    def __init__(self, block: Callable[[np.ndarray], np.ndarray], rows: int, cols: int):
        self.block, self.rows, self.cols = block, rows, cols
        self.dense: np.ndarray | None = None

    def initial_gains(self, demand: np.ndarray | None = None) -> np.ndarray:
        keep = self.rows * self.cols <= _DENSE_ENTRIES
        chunk = max(1, _BATCH_ENTRIES // self.cols)
        gains, kept = [], []
        for start in range(0, self.rows, chunk):
            block = self.block(np.arange(start, min(start + chunk, self.rows)))
            gains.append((block if demand is None else block * demand).sum(axis=-1))
            if keep:
                kept.append(block)
        if keep:
            self.dense = np.concatenate(kept)
        return np.concatenate(gains)

    def __call__(self, js: np.ndarray) -> np.ndarray:
        return self.block(js) if self.dense is None else self.dense[js]


class _SortedPools:
    """Candidates of the small pools in (pool size, pool) order, with each set component as
    per-pool bit masks: the intersection counts A @ A.T of one pool are popcounts of ANDs."""

    def __init__(
        self,
        features: RelationshipFeatures,
        order: np.ndarray,
        group_ids: np.ndarray,
        single_base: bool,
        weights: DistanceWeights,
    ):
        self.weights = weights
        self.sizes = np.bincount(group_ids)[group_ids[order]]
        pool_of_row = np.cumsum(np.r_[False, np.diff(group_ids[order]) != 0])
        self.code = features.code[order]
        self.base = None if single_base else features.base[order]
        self.components = []
        for name in _SET_COMPONENTS:
            weight = getattr(weights, name)
            if weight:
                matrix = getattr(features, name)[order]
                self.components.append((_PoolBits(matrix, pool_of_row), weight))

    def batches(self):
        """(start row, stop row, pool size) of runs of equal-sized pools, cut to fit memory."""
        row = 0
        while row < self.sizes.size:
            n = int(self.sizes[row])
            end = int(np.searchsorted(self.sizes, n, side="right"))
            step = n * max(1, _BATCH_ENTRIES // (n * n))
            for start in range(row, end, step):
                yield start, min(start + step, end), n
            row = end

    def similarity(self, start: int, stop: int, n: int) -> np.ndarray:
        shape = ((stop - start) // n, n, n)
        jaccards = []
        for bits, weight in self.components:
            intersection, union = bits.counts(start, stop, n)
            jaccards.append(_weighted_jaccard(intersection, union, weight))
        code = self.code[start:stop].reshape(-1, n)
        same_code = code[:, :, None] == code[:, None, :]
        same_base: np.ndarray | bool = True
        if self.base is not None:
            base = self.base[start:stop].reshape(-1, n)
            same_base = base[:, :, None] == base[:, None, :]
        return _similarity(self.weights, shape, same_base, same_code, jaccards)


class _PoolBits:
    """One set component as bit masks: a token's bit is its rank among the distinct tokens
    of its pool, so a pool of n candidates needs ceil(distinct / 64) words per candidate."""

    def __init__(self, matrix: sparse.csr_array, pool_of_row: np.ndarray):
        self.indptr = matrix.indptr
        self.sizes = np.diff(matrix.indptr)
        self.row_of_entry = np.repeat(np.arange(self.sizes.size), self.sizes)
        if matrix.shape[1] <= 64:  # a small vocabulary (tree labels) fits one word as is
            self.rank = matrix.indices.astype(np.int64)
            return
        pool_of_entry = pool_of_row[self.row_of_entry]
        key = pool_of_entry * matrix.shape[1] + matrix.indices
        self.rank = np.empty(key.size, dtype=np.int64)
        if not key.size:
            return
        by_key = np.argsort(key)  # rows are grouped by pool already: nearly sorted
        sorted_key = key[by_key]
        new_token = np.r_[True, sorted_key[1:] != sorted_key[:-1]]
        distinct = np.cumsum(new_token) - 1
        sorted_pool = pool_of_entry[by_key]
        pool_start = np.r_[True, sorted_pool[1:] != sorted_pool[:-1]]
        first_of_pool = np.maximum.accumulate(np.where(pool_start, np.arange(key.size), 0))
        self.rank[by_key] = distinct - distinct[first_of_pool]

    def counts(self, start: int, stop: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Intersection and union sizes for every pair inside each pool: two (B, n, n) arrays."""
        first, last = self.indptr[start], self.indptr[stop]
        rank = self.rank[first:last]
        words = int(rank.max(initial=0)) // 64 + 1
        slot = (self.row_of_entry[first:last] - start) * words + rank // 64
        bit = rank % 64
        # Bits of one word are distinct, so OR = sum; two exact float sums of 32-bit halves.
        low = np.bincount(slot, np.where(bit < 32, 2.0**bit, 0.0), (stop - start) * words)
        high = np.bincount(slot, np.where(bit >= 32, 2.0 ** (bit - 32), 0.0), low.size)
        masks = low.astype(np.uint64) | (high.astype(np.uint64) << np.uint64(32))
        masks = masks.reshape(-1, n, words)
        intersection = np.zeros((masks.shape[0], n, n), dtype=np.int32)
        for word in range(words):  # one word at a time: memory stays (B, n, n)
            mask = masks[:, :, word]
            intersection += np.bitwise_count(mask[:, :, None] & mask[:, None, :])
        sizes = self.sizes[start:stop].reshape(-1, n).astype(np.int32)
        union = sizes[:, :, None] + sizes[:, None, :] - intersection
        return intersection, union


# 5. Which originals to label first --------------------------------------------------------

# Up to this many originals, select_originals runs the exact lazy greedy with S between them
# kept whole (2,896² entries fill _DENSE_ENTRIES). Above it the exact greedy cannot answer in
# a web request (every pair once, then about m/50 rows re-evaluated per pick, as S between
# originals is dense: 150 s and more for 15,000), so it runs on random parts of at most this
# size (selection.md §5, "Large corpora").
ORIGINALS_EXACT_MAX = math.isqrt(_DENSE_ENTRIES)
# A dense column factor of a profile component up to this many entries (8 bytes each):
# small vocabularies (codes, tree labels) multiply as dense arrays, large ones stay sparse.
_DENSE_FACTOR_ENTRIES = 1 << 21
# Similarity entries per chunk of rows in _Profiles.block: its temporaries stay a few MiB.
_PROFILE_CHUNK_ENTRIES = 1 << 19


def select_originals(
    relationships: Sequence[Relationship] | RelationshipFeatures,
    budget: int,
    *,
    priority: Mapping[str, float] | Sequence[float] | None = None,
    weights: DistanceWeights = DEFAULT_WEIGHTS,
    demand_sample: int | None = None,
    seed: int = 0,
) -> list[str]:
    """Up to `budget` original keys, in the order to label them.

    Each original is the union of the relationships given for it (usually the candidates
    select_diverse chose): its removed, added and tree sets and its set of codes. The same
    facility location runs over originals, each original i weighted by priority_i
    (non-negative; higher is labeled first). Up to ORIGINALS_EXACT_MAX originals the greedy
    is exact; above, it runs on seeded random parts of at most that size, each conditioned on
    the originals chosen in the parts before it (selection.md §5). `demand_sample` instead
    sums coverage over a seeded sample of originals, with the exact greedy over all of them.
    """
    if budget < 0:
        raise ValueError(f"budget must be non-negative, got {budget}")
    features = (
        relationships
        if isinstance(relationships, RelationshipFeatures)
        else RelationshipFeatures.build(relationships)
    )
    keys = features.base_keys
    if budget == 0 or not keys:
        return []
    demand_weights = _priorities(priority, keys)
    profiles = _Profiles(features, weights)
    if demand_sample is None and len(keys) > ORIGINALS_EXACT_MAX:
        chosen = _partitioned_greedy(profiles, demand_weights, budget, seed)
        return [keys[j] for j in chosen]
    demand = np.arange(len(keys))
    if demand_sample is not None and demand_sample < len(keys):
        if demand_sample < 1:
            raise ValueError(f"demand_sample must be at least 1, got {demand_sample}")
        rng = np.random.default_rng(seed)
        demand = np.sort(rng.choice(len(keys), size=demand_sample, replace=False))
    weights_of_demand = demand_weights[demand]
    of_demand = profiles.columns(demand)

    columns = _SimilarityRows(lambda rows: profiles.block(rows, of_demand), len(keys), demand.size)
    gains = columns.initial_gains(weights_of_demand)
    chosen = lazy_greedy(gains, columns, budget, demand_weights, weights_of_demand)
    return [keys[j] for j in chosen]


def _priorities(priority: Mapping[str, float] | Sequence[float] | None, keys) -> np.ndarray:
    if priority is None:
        return np.ones(len(keys))
    if isinstance(priority, Mapping):
        missing = [key for key in keys if key not in priority]
        if missing:
            raise ValueError(f"priority has no value for originals {missing[:5]}")
        priority = [priority[key] for key in keys]
    values = _checked_scores(priority, len(keys), "priority", of="originals")
    if (values < 0).any():
        raise ValueError("priority values are multipliers and must be non-negative")
    # All zero (Original.priority's default) says nothing: count every original alike.
    return values if values.any() else np.ones(len(keys))


def _partitioned_greedy(
    profiles: _Profiles, priority: np.ndarray, budget: int, seed: int
) -> list[int]:
    """Greedy facility location over m > ORIGINALS_EXACT_MAX originals, in O(m · N) similarity
    entries for parts of N ≤ ORIGINALS_EXACT_MAX instead of the exact greedy's O(m²) and more.

    1. A seeded random permutation cut into P = ⌈m / N⌉ parts of near-equal size; each part
       is a uniform sample of the originals, so its coverage stands for the whole corpus'.
    2. Each part's quota is its share of the budget, rounded up: every part proposes at least
       one original, so that a small budget still sees all of them.
    3. Part by part, the exact lazy greedy on that part, covering that part's originals, given
       cover_i = max S_ia over the originals a chosen in earlier parts: facility location on
       S'_ij = max(S_ij - cover_i, 0) is f(A | chosen so far), still monotone submodular.
    4. The picks in the order of their marginal gain when picked, scaled by m / part size:
       within a part that is its greedy order (gains only fall), across parts the larger
       contribution first; cut at the budget (the rounding up adds fewer than P picks).
    """
    size = profiles.size
    budget = min(budget, size)
    rng = np.random.default_rng(seed)
    parts = [
        np.sort(part)
        for part in np.array_split(rng.permutation(size), math.ceil(size / ORIGINALS_EXACT_MAX))
    ]
    quotas = [min(part.size, -(-budget * part.size // size)) for part in parts]
    cover = np.zeros(size)  # max S to the originals chosen in earlier parts
    chosen: list[int] = []
    gains: list[float] = []
    for number, (part, quota) in enumerate(zip(parts, quotas, strict=True)):
        local, local_gains = _conditioned_greedy(profiles, part, cover[part], priority[part], quota)
        picks = part[local]
        chosen.extend(picks.tolist())
        gains.extend(gain * size / part.size for gain in local_gains)
        if number + 1 < len(parts):
            later = np.concatenate(parts[number + 1 :])
            of_later = profiles.columns(later)
            step = max(1, _BATCH_ENTRIES // later.size)
            for start in range(0, picks.size, step):
                block = profiles.block(picks[start : start + step], of_later)
                cover[later] = np.maximum(cover[later], block.max(axis=0))
    order = sorted(range(len(chosen)), key=lambda index: -gains[index])  # stable on ties
    return [chosen[index] for index in order[:budget]]


def _conditioned_greedy(
    profiles: _Profiles, part: np.ndarray, cover: np.ndarray, demand: np.ndarray, k: int
) -> tuple[list[int], list[float]]:
    """The exact lazy greedy on the originals `part` given their cover by earlier choices:
    up to k local indices in selection order, and the marginal gain of each when picked."""
    # S'_ji = max(S_ji - cover_i, 0), whole: at most ORIGINALS_EXACT_MAX² entries (64 MiB).
    shifted = profiles.block(part, profiles.columns(part))
    shifted -= cover
    np.maximum(shifted, 0.0, out=shifted)
    step = max(1, _BATCH_ENTRIES // part.size)
    gains = np.concatenate(
        [
            (shifted[start : start + step] * demand).sum(axis=-1)
            for start in range(0, part.size, step)
        ]
    )
    local = lazy_greedy(gains, lambda js: shifted[js], k, demand, demand)
    picked, covered = [], np.zeros(part.size)
    for row in shifted[local]:
        picked.append(float((demand * np.maximum(row - covered, 0.0)).sum()))
        np.maximum(covered, row, out=covered)
    return local, picked


@dataclass(frozen=True, eq=False)
class _ProfileColumns:
    """The column side of _Profiles.block for some originals, factored once per component."""

    originals: np.ndarray
    factors: tuple  # per component: ((V, n) dense array or sparse matrix, (n,) set sizes)


class _Profiles:
    """Originals as unions of their candidates' sets; S between originals is the weighted
    Jaccard similarity of removed, added, tree and the set of codes. The base term is left
    out: two originals always differ in it."""

    def __init__(self, features: RelationshipFeatures, weights: DistanceWeights):
        originals = len(features.base_keys)
        self.size = originals
        membership = sparse.csr_array(
            (np.ones(len(features), dtype=np.int32), (features.base, np.arange(len(features)))),
            shape=(originals, len(features)),
        )
        codes = sparse.csr_array(
            (np.ones(len(features), dtype=np.int32), (np.arange(len(features)), features.code)),
            shape=(len(features), len(features.code_keys)),
        )
        self.components = []
        for matrix, weight in (
            (features.removed, weights.removed),
            (features.added, weights.added),
            (features.tree, weights.tree),
            (codes, weights.code),
        ):
            if weight:
                union = (membership @ matrix).tocsr()
                # Binary, in float64: products are exact counts, already in the dtype S needs.
                union.data = np.ones(union.data.size)
                self.components.append((union, _row_sizes(union).astype(np.float64), weight))
        self.total = sum(component[-1] for component in self.components)

    def columns(self, originals: np.ndarray) -> _ProfileColumns:
        factors = []
        for union, sizes, _ in self.components:
            of = union[originals]
            dense = of.shape[1] * originals.size <= _DENSE_FACTOR_ENTRIES
            factors.append((of.T.toarray() if dense else of.T.tocsr(), sizes[originals]))
        return _ProfileColumns(originals, tuple(factors))

    def block(self, originals: np.ndarray, columns: _ProfileColumns) -> np.ndarray:
        """S between `originals` (rows) and the originals of `columns`; a chunk of rows at a
        time so that the temporaries stay small.

        Bit for bit what _weighted_jaccard and the component sums give: the same float64
        operations in the same order, so the exact greedy's ties fall as they always did."""
        if not self.components:  # only the base weight: every original is its own kind
            return (originals[:, None] == columns.originals[None, :]).astype(np.float64)
        similarity = np.zeros((originals.size, columns.originals.size))
        step = max(1, _PROFILE_CHUNK_ENTRIES // max(columns.originals.size, 1))
        rows = [union[originals] for union, _, _ in self.components]
        for start in range(0, originals.size, step):
            stop = min(start + step, originals.size)
            chunk = similarity[start:stop]
            for (_, sizes, weight), left, (factor, column_sizes) in zip(
                self.components, rows, columns.factors, strict=True
            ):
                intersection = (
                    left if stop - start == originals.size else left[start:stop]
                ) @ factor
                if sparse.issparse(intersection):
                    intersection = intersection.toarray()
                row_sizes = sizes[originals[start:stop]]
                union = np.add.outer(row_sizes, column_sizes)
                union -= intersection
                # Two empty sets are the same change: 1, as _weighted_jaccard's 0/0 case.
                both_empty = np.ix_(row_sizes == 0, column_sizes == 0)
                intersection[both_empty] = 1.0
                union[both_empty] = 1.0
                share = np.divide(intersection, union, out=intersection)
                share *= weight
                chunk += share
            chunk /= self.total
        return similarity
