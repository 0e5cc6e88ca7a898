"""bench/flip_classifier.py: the classifier in the loop with and without counterfactual
pairs; its fit uses the pairs, and the script prints its RESULT line or one-line errors."""

import subprocess
from pathlib import Path

import pytest

from bench.flip_classifier import fitted, measure, measure_campaign, reviews
from generation.cad_sentiment import SentimentPair
from tests.support import run_bench

REPO = Path(__file__).resolve().parents[2]
CAD = REPO.parent / "shared" / "data" / "cad"


def _pair(key: str, good: str, bad: str) -> SentimentPair:
    return SentimentPair(
        key, f"The film was {good}.", "Positive", f"The film was {bad}.", "Negative"
    )


TRAIN = [_pair(f"t{i}", good, bad) for i, (good, bad) in enumerate([("fun", "dull")] * 4)]
DEV = [_pair("d", "fun", "dull")]


def test_the_pairs_teach_what_the_originals_alone_cannot():
    # Every original is positive: alone it has one label to learn, so only pairs can flip.
    with pytest.raises(ValueError):
        fitted(TRAIN, [])
    classifier = fitted(TRAIN, TRAIN[:2])
    assert [p.label for p in classifier.predict(["The film was dull."])] == ["Negative"]


def test_measure_reports_the_baseline_only_where_it_has_originals():
    flipped = SentimentPair("n", "The plot was dull.", "Negative", "The plot was fun.", "Positive")
    mixed = [*TRAIN, flipped]
    figures = measure(mixed, reviews(DEV), originals=5, pairs=2, draws=2)
    assert set(figures) == {
        f"{prefix}{side}"
        for prefix in ("", "baseline_", "lexicon_")
        for side in ("original", "revised")
    }
    assert all(0 <= value <= 1 for value in figures.values())
    alone = measure(mixed, reviews(DEV), originals=0, pairs=5, draws=1)
    assert set(alone) == {"original", "revised"}


def test_the_campaign_measure_predicts_edits_of_the_originals_it_was_fitted_on():
    flipped = SentimentPair("n", "The plot was dull.", "Negative", "The plot was fun.", "Positive")
    train = [
        SentimentPair(
            f"t{i}", f"The film {i} was fun.", "Positive", f"The film {i} was dull.", "Negative"
        )
        for i in range(6)
    ] + [flipped]
    figures = measure_campaign(train, originals=7, pairs=0, draws=1)
    assert set(figures) == {"revised", "baseline_revised", "lexicon_revised"}
    # Fitted on "The film 3 was fun.", n-grams call "The film 3 was dull." positive.
    assert figures["baseline_revised"] < 0.5 < figures["revised"]
    assert measure_campaign(train, originals=2, pairs=2, draws=1) == {}  # nothing left to predict


def _run(*options: str) -> subprocess.CompletedProcess:
    return run_bench("flip_classifier.py", *options)


@pytest.mark.skipif(not CAD.exists(), reason="needs ../shared/data/cad beside the checkout")
def test_the_script_prints_the_demo_setting_and_its_ratio():
    finished = _run("--quick")

    assert finished.returncode == 0, finished.stderr[-3000:]
    result = finished.stdout.strip().splitlines()[-1]
    assert result.startswith("RESULT flip_classifier ratio=")
    figures = dict(pair.split("=", 1) for pair in result.split()[2:])
    assert (figures["originals"], figures["pairs"]) == ("40", "36")
    # The pairs and the lexicon must help on the revisions, by a margin no draw of 40
    # originals erases; on the campaign's own originals' edits most of all.
    assert float(figures["revised"]) > float(figures["baseline_revised"]) + 0.1
    assert float(figures["campaign_revised"]) > float(figures["campaign_baseline_revised"]) + 0.3


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--data", "/nowhere"], "bench: the CAD sentiment data is missing at /nowhere"),
        (["--draws", "0", "--data", str(CAD)], "bench: --draws must be at least 1"),
    ],
)
def test_bad_options_are_one_line_exit_2(options, message):
    if "--draws" in options and not CAD.exists():
        pytest.skip("needs ../shared/data/cad beside the checkout")
    finished = _run(*options)

    assert finished.returncode == 2
    assert finished.stderr.strip().splitlines() == [message]
