"""bench/selection.py: its baselines choose what the greedies they mirror choose, and the
script runs at a tiny size and prints its RESULT line with the polyjuice ratio."""

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.selection import (
    baseline_max_min,
    baseline_polyjuice,
    baseline_select_originals,
    main_select_originals,
    pools_of,
    quality,
    synthetic_originals,
    synthetic_relationships,
)
from generation import selection
from generation.relationship import Relationship
from generation.selection import (
    DEFAULT_WEIGHTS,
    RelationshipFeatures,
    select_diverse_many,
    select_originals,
)

REPO = Path(__file__).resolve().parents[2]


def _relationship(removed, added, code="lexical", tree=("nsubj:NOUN",)):
    return Relationship(
        base="x",
        removed=frozenset(removed),
        added=frozenset(added),
        tree=frozenset(tree),
        code=code,
    )


# "a man walks": three near copies of man -> woman, and two different edits.
POOL = [
    _relationship({"man"}, {"woman"}),
    _relationship({"man"}, {"woman"}),
    _relationship({"man"}, {"woman", "tall"}),
    _relationship({"walk"}, {"dance"}, code="resemantic", tree=("ROOT:VERB",)),
    _relationship({"a", "man"}, {"two", "people"}, code="quantifier", tree=("det:DET",)),
]


def test_polyjuice_baseline_starts_at_the_first_and_then_takes_the_largest_mean_distance():
    # polyjuice-nlp's greedy finds no gain above 0 at its first step and keeps all_items[0];
    # then the farthest on average from those chosen, the first of equals on ties.
    chosen = baseline_polyjuice(POOL, {"x": list(range(5))}, 3, DEFAULT_WEIGHTS)["x"]
    assert chosen[0] == 0
    assert set(chosen[1:]) == {3, 4}  # the two other kinds of change, not another woman


def test_max_min_baseline_keeps_its_picks_apart():
    chosen = baseline_max_min(POOL, {"x": list(range(5))}, 3, DEFAULT_WEIGHTS)["x"]
    assert chosen[0] == 0 and set(chosen[1:]) == {3, 4}


def test_ours_covers_each_pool_at_least_as_well_as_the_baselines():
    relationships, fluency = synthetic_relationships(200, 10, seed=3)
    pools = pools_of(relationships)
    features = RelationshipFeatures.build(relationships)
    ours = select_diverse_many(features, 3, fluency=fluency)
    coverage = {
        name: quality(features, pools, picks, DEFAULT_WEIGHTS)[0]
        for name, picks in (
            ("ours", ours),
            ("polyjuice", baseline_polyjuice(relationships, pools, 3, DEFAULT_WEIGHTS)),
            ("max-min", baseline_max_min(relationships, pools, 3, DEFAULT_WEIGHTS)),
        )
    }
    # Greedy facility location is what ours maximises; the baselines maximise spread.
    assert coverage["ours"] > coverage["polyjuice"]
    assert coverage["ours"] > coverage["max-min"]


def test_the_script_runs_and_its_ratio_is_the_polyjuice_baselines(tmp_path):
    arguments = ["--originals", "1000", "--sample", "200", "--repeats", "1"]
    completed = subprocess.run(
        [sys.executable, str(REPO / "bench" / "selection.py"), *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert completed.returncode == 0, completed.stderr
    last = completed.stdout.strip().splitlines()[-1]
    assert last.startswith("RESULT selection ratio=")
    fields = dict(re.findall(r"(\w+)=([\d.]+)", last))
    assert fields["candidates"] == "10000" and fields["originals"] == "1000"
    ours = float(fields["build_s"]) + float(fields["select_s"])
    assert float(fields["ratio"]) == pytest.approx(float(fields["baseline_s"]) / ours, rel=0.05)
    assert float(fields["ratio_max_min"]) == pytest.approx(
        float(fields["max_min_s"]) / ours, rel=0.05
    )


def test_the_select_originals_baseline_is_the_exact_greedy_ours_runs_up_to_its_limit():
    relationships, priority = synthetic_originals(300, seed=4)
    features = RelationshipFeatures.build(relationships)
    baseline = baseline_select_originals(features, 40, priority, DEFAULT_WEIGHTS)
    ours = select_originals(features, 40, priority=priority)
    assert ours == [features.base_keys[j] for j in baseline]


def test_the_select_originals_case_reports_both_times_and_the_coverage(monkeypatch, capsys):
    monkeypatch.setattr(selection, "ORIGINALS_EXACT_MAX", 100)  # four parts of 100
    arguments = argparse.Namespace(originals=400, budget=30, seed=0, repeats=1)
    main_select_originals(arguments)
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("RESULT select_originals ratio=")
    fields = {key: float(value) for key, value in re.findall(r"(\w+)=([\d.]+)", last)}
    assert (fields["originals"], fields["budget"]) == (400, 30)
    # The line rounds the times to 3 decimals and the ratio to 2: at a few milliseconds
    # that rounding alone moves the quotient by more than a few per cent.
    seconds, baseline = max(fields["seconds"], 0.0005), max(fields["baseline_s"], 0.0005)
    rounding = 0.0005 / seconds + 0.0005 / baseline + 0.005 / fields["ratio"]
    assert fields["ratio"] == pytest.approx(baseline / seconds, rel=0.01 + rounding)
    assert fields["coverage"] > fields["coverage_random"]  # the exact greedy's is 1
