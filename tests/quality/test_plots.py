import pytest

from cfannotate.quality import plots


def test_round_times_are_binned_and_fast_rounds_drawn_apart():
    chart = plots.round_time_chart([5, 7, 20, 20, 31, 400], threshold=18)
    titles = [bar.title for bar in chart.bars]
    assert titles == [
        "1 round(s) took 0 to 6 s",
        "1 round(s) took 6 to 12 s",
        "2 round(s) took 18 to 24 s",
        "1 round(s) took 30 to 36 s",
        "1 round(s) took 120 s or more",
    ]
    assert [bar.series for bar in chart.bars] == [1, 1, 0, 0, 0]
    assert chart.description == "6 rounds; 2 took 18 s or less."
    assert chart.markers[0].label == "18 s"
    # every bar sits inside the plot, its height proportional to its count
    assert all(
        chart.top <= bar.y and bar.y + bar.height <= chart.bottom + 1e-6 for bar in chart.bars
    )
    heights = {bar.title: bar.height for bar in chart.bars}
    assert heights["2 round(s) took 18 to 24 s"] == pytest.approx(
        2 * heights["1 round(s) took 30 to 36 s"]
    )


def test_gold_chart_stacks_kept_and_filtered_workers():
    chart = plots.gold_chart([(6, 6, True), (6, 6, True), (3, 6, False), (5, 6, True)])
    assert [tick.label for tick in chart.x_ticks] == ["0", "1", "2", "3", "4", "5", "6"]
    assert sorted(bar.title for bar in chart.bars) == [
        "1 worker(s) with 3 right, filtered out",
        "1 worker(s) with 5 right, kept",
        "2 worker(s) with 6 right, kept",
    ]
    assert plots.gold_chart([]).empty


def test_label_chart_has_one_row_per_worker_and_shares_that_fill_it():
    chart = plots.label_chart(
        [
            ("all workers", [("negative", 0.5), ("positive", 0.5)]),
            ("w1", [("negative", 0.0), ("positive", 1.0)]),
        ],
        labels=["negative", "positive"],
    )
    assert [tick.label for tick in chart.y_ticks] == ["all workers", "w1"]
    assert len(chart.bars) == 3  # a zero share draws nothing
    first_row = [bar for bar in chart.bars if bar.title.startswith("all workers")]
    assert sum(bar.width for bar in first_row) == pytest.approx(chart.plot_width - 60)
    assert plots.label_chart([], labels=[]).empty
