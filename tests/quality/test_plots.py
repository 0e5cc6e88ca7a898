import pytest

from cfannotate.quality import plots


def test_round_times_are_binned_and_fast_rounds_drawn_apart():
    chart = plots.round_time_chart([5, 7, 20, 20, 31, 400], threshold=18)
    titles = [bar.title for bar in chart.bars]
    assert titles == [
        "1 round took 0 to 6 s",
        "1 round took 6 to 12 s",
        "2 rounds took 18 to 24 s",
        "1 round took 30 to 36 s",
        "1 round took 120 s or more",
    ]
    assert [bar.series for bar in chart.bars] == [1, 1, 0, 0, 0]
    assert chart.description == "6 rounds; 2 took 18 s or less."
    assert chart.markers[0].label == "18 s"
    # every bar sits inside the plot, its height proportional to its count
    assert all(
        chart.top <= bar.y and bar.y + bar.height <= chart.bottom + 1e-6 for bar in chart.bars
    )
    heights = {bar.title: bar.height for bar in chart.bars}
    assert heights["2 rounds took 18 to 24 s"] == pytest.approx(
        2 * heights["1 round took 30 to 36 s"]
    )


def _gold(right, total, qualified, on_hold=False):
    return plots.WorkerStanding("w", 30.0, right, total, qualified, on_hold)


def test_gold_chart_stacks_kept_and_filtered_workers():
    chart = plots.gold_chart(
        [_gold(6, 6, True), _gold(6, 6, True), _gold(3, 6, False), _gold(5, 6, True)]
    )
    assert [tick.label for tick in chart.x_ticks] == ["0", "1", "2", "3", "4", "5", "6"]
    assert sorted(bar.title for bar in chart.bars) == [
        "1 worker with 3 right, filtered out",
        "1 worker with 5 right, kept",
        "2 workers with 6 right, kept",
    ]
    assert plots.gold_chart([]).empty
    assert chart.legend == [(0, "kept"), (1, "filtered out")]


def test_workers_on_hold_are_drawn_apart_from_the_filtered():
    workers = [_gold(2, 4, False, on_hold=True), _gold(1, 4, False), _gold(4, 4, True)]
    chart = plots.gold_chart(workers)
    assert sorted(bar.title for bar in chart.bars) == [
        "1 worker with 1 right, filtered out",
        "1 worker with 2 right, on hold for more gold",
        "1 worker with 4 right, kept",
    ]
    assert chart.table.columns == [
        "Gold right",
        "Workers kept",
        "Workers on hold for more gold",
        "Workers filtered out",
    ]
    assert (2, "on hold for more gold") in chart.legend
    scatter = plots.worker_chart(workers, min_seconds=18, min_gold_share=4 / 6)
    assert [row[-1] for row in scatter.table.rows] == [
        "on hold for more gold",
        "filtered out",
        "kept",
    ]
    assert {point.series for point in scatter.points} == {0, 1, 2}
    assert scatter.description == "3 workers drawn, 1 kept."


def test_one_worker_or_round_is_counted_in_words():
    one = [_gold(3, 6, False)]
    assert plots.worker_chart(one, min_seconds=18, min_gold_share=4 / 6).description == (
        "1 worker drawn, 0 kept."
    )
    assert plots.round_time_chart([30], threshold=18).description == "1 round; 0 took 18 s or less."
    assert plots.gold_chart(one).description == "1 worker; 0 kept."


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


def test_every_quality_chart_carries_its_numbers_as_a_table():
    times = plots.round_time_chart([5, 20, 20], threshold=18)
    assert times.table.columns == ["Seconds", "Rounds", "Against the threshold"]
    assert times.table.rows == [["0 to 6 s", "1", "at or below"], ["18 to 24 s", "2", "slower"]]
    gold = plots.gold_chart([_gold(6, 6, True), _gold(3, 6, False)])
    assert gold.table.rows == [["3", "0", "1"], ["6", "1", "0"]]
    labels = plots.label_chart(
        [("a-worker-with-a-long-name", [("negative", 0.25), ("positive", 0.75)])],
        labels=["negative", "positive"],
    )
    assert labels.table.rows == [["a-worker-with-a-long-name", "25%", "75%"]]
    assert labels.y_ticks[0].label == "a-worker-with…"  # the tick is short, the table is not


def _standing(name, seconds, right, total, qualified):
    return plots.WorkerStanding(name, seconds, right, total, qualified)


def test_worker_chart_places_workers_against_both_c2_thresholds():
    workers = [
        _standing("careful", 30.0, 6, 6, True),
        _standing("careful-too", 30.0, 6, 6, True),  # same place: one larger dot
        _standing("fast", 9.0, 3, 6, False),
        _standing("slow-forever", 500.0, 5, 6, True),
        _standing("no-gold", 25.0, 0, 0, True),
    ]
    chart = plots.worker_chart(workers, min_seconds=18, min_gold_share=4 / 6)
    assert not chart.empty
    assert len(chart.points) == 3
    big = next(point for point in chart.points if point.count == 2)
    assert big.title.startswith("careful, careful-too: 30.0 s median, 6/6 gold right, kept")
    assert big.radius > min(point.radius for point in chart.points)
    fast = next(point for point in chart.points if point.title.startswith("fast"))
    threshold = chart.markers[0]
    level = chart.levels[0]
    assert threshold.label == "18 s" and level.label == "67%"
    assert fast.x < threshold.x and fast.y > level.y and fast.series == 1  # left and below
    assert big.x > threshold.x and big.y == pytest.approx(chart.top)
    slow = next(point for point in chart.points if point.title.startswith("slow"))
    assert slow.x == pytest.approx(chart.right)  # off the scale: on the right edge
    region = chart.regions[0]
    assert region.x == pytest.approx(threshold.x) and region.y + region.height == pytest.approx(
        level.y
    )
    # The table has the picture's dots, the most crowded first: as long as the picture, not
    # the crowd (the page's worker table has every worker). It says which it left out.
    assert chart.table.rows == [
        ["careful, careful-too", "2", "30.0", "6/6", "100%", "kept"],
        ["fast", "1", "9.0", "3/6", "50%", "filtered out"],
        ["slow-forever", "1", "500.0", "5/6", "83%", "kept"],
    ]
    assert "1 without gold answers or timed rounds are only in the worker table" in (
        chart.description
    )
    assert plots.worker_chart([workers[4]], min_seconds=18, min_gold_share=0.5).empty


def test_a_crowd_at_one_place_of_the_worker_chart_is_one_row_and_one_dot():
    """A thousand workers the plot draws on a few pixels: a few rows, each with their span."""
    workers = [
        _standing(f"w{number:04}", (29.94, 30.0, 30.04)[number % 3], 6, 6, True)
        for number in range(1000)
    ] + [_standing("odd", 30.0, 4, 4, True)]  # all within one pixel
    chart = plots.worker_chart(workers, min_seconds=18, min_gold_share=4 / 6)
    assert len(chart.points) == 1 and chart.points[0].count == 1001
    [row] = chart.table.rows
    assert row[0] == "w0000, w0001, w0002, w0003, w0004 and 996 others"
    assert row[1:] == ["1001", "29.9 to 30.0", "various", "100%", "kept"]
    assert chart.points[0].title.startswith(
        "w0000, w0001, w0002, w0003, w0004 and 996 others: 29.9 to 30.0 s median, various gold"
    )


def test_position_chart_stacks_label_shares_per_round_position():
    chart = plots.position_chart(
        [(1, {"negative": 1, "positive": 3}), (3, {"positive": 2})],
        labels=["negative", "positive"],
    )
    assert [tick.label for tick in chart.x_ticks] == ["1", "3"]
    assert sorted(bar.title for bar in chart.bars) == [
        "Round 1: 25% negative of 4 judgments",
        "Round 1: 75% positive of 4 judgments",
        "Round 3: 100% positive of 2 judgments",
    ]
    column = [bar for bar in chart.bars if bar.title.startswith("Round 1")]
    assert sum(bar.height for bar in column) == pytest.approx(chart.plot_height)
    assert chart.table.rows == [["1", "4", "25%", "75%"], ["3", "2", "0%", "100%"]]
    assert plots.position_chart([], labels=["negative"]).empty


def test_agreement_chart_draws_defined_statistics_and_says_undefined_in_the_table():
    from cfannotate.quality.agreement import agreement

    agreeing = agreement([["a", "a"], ["b", "b"], ["a", "a"]])
    one_category = agreement([["a", "a"], ["a", "a"]])  # kappa undefined
    disagreeing = agreement([["a", "b"], ["b", "a"], ["a", "b"]])
    chart = plots.agreement_chart(
        [("labels", agreeing), ("validity", one_category), ("worse", disagreeing)]
    )
    titles = [bar.title for bar in chart.bars]
    assert "labels: Fleiss' kappa 1.000" in titles
    assert not any(title.startswith("validity: Fleiss") for title in titles)
    assert chart.table.rows[1][0] == "validity" and "undefined" in chart.table.rows[1]
    # A negative kappa draws left of a zero line that the chart then shows.
    assert chart.markers and chart.markers[0].label == "0"
    negative = next(bar for bar in chart.bars if bar.title.startswith("worse: Fleiss"))
    assert negative.x + negative.width == pytest.approx(chart.markers[0].x)
    empty = plots.agreement_chart([("labels", agreement([]))])
    assert empty.empty and empty.table.rows == [["labels", "0", *["undefined"] * 3]]
