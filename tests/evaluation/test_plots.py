"""Chart geometry: bar heights are the shares, whiskers span the intervals."""

import pytest

from cfannotate.evaluation import plots
from cfannotate.quality.plots import PLOT_HEIGHT, TOP

FIGURE = {"value": 0.5, "low": 0.25, "high": 0.75, "correct": 1, "total": 2}
TABLE2 = {
    "originals": 2,
    "counterfactuals": 2,
    "original_accuracy": {**FIGURE, "value": 1.0, "low": 1.0, "high": 1.0},
    "contrast_accuracy": FIGURE,
    "drop": {"value": -0.5, "low": -0.75, "high": -0.25},
    "consistency": FIGURE,
    "bootstrap": {"replicates": 1000, "confidence": 0.95, "seed": 0},
}


def _y(share):
    return TOP + PLOT_HEIGHT * (1 - share)


def test_table2_bars_and_whiskers_follow_the_figures():
    chart = plots.contrast_chart(TABLE2)

    bars = [bar for bar in chart.bars if bar.series != plots.INTERVAL_SERIES]
    whiskers = [bar for bar in chart.bars if bar.series == plots.INTERVAL_SERIES]
    assert [bar.series for bar in bars] == [0, 1, 2]
    assert [bar.y for bar in bars] == pytest.approx([_y(1.0), _y(0.5), _y(0.5)])
    assert bars[1].height == pytest.approx(PLOT_HEIGHT / 2)
    stem = whiskers[3]  # the contrast set's stem, after the originals' stem and two caps
    assert stem.y == pytest.approx(_y(0.75))
    assert stem.height == pytest.approx(_y(0.25) - _y(0.75))
    assert "95% interval 25.0% to 75.0%" in stem.title
    assert [tick.label for tick in chart.y_ticks] == ["0%", "25%", "50%", "75%", "100%"]
    assert "(-50.0%)" in chart.description


def test_table3_groups_comp_and_aug_by_test_set():
    result = {
        "n": 10,
        "m": 4,
        "splits": [{}, {}],
        "comp_original_accuracy": {"mean": 0.9, "std": 0.1},
        "comp_contrast_accuracy": {"mean": 0.2, "std": 0.0},
        "aug_original_accuracy": {"mean": 0.9, "std": 0.05},
        "aug_contrast_accuracy": {"mean": 0.8, "std": 0.1},
    }

    chart = plots.augmentation_chart(result)

    bars = [bar for bar in chart.bars if bar.series != plots.INTERVAL_SERIES]
    assert [tick.label for tick in chart.x_ticks] == ["Held-out originals", "Contrast set"]
    assert [bar.series for bar in bars] == [0, 1, 0, 1]
    assert bars[3].y == pytest.approx(_y(0.8))
    assert bars[3].title == "aug on contrast set: 80.0%"
    assert chart.legend == [(0, "comp (n + 4 originals)"), (1, "aug (n + 4 x̂)")]
    assert "mean over 2 splits" in chart.description


def test_no_groups_is_an_empty_chart():
    assert plots.grouped_bar_chart([], title="t", description="d", interval_name="i").empty
