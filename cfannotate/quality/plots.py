"""Geometry of the quality page's charts, drawn as inline SVG by `quality/_chart.html`.

Three charts a researcher reads at a glance: time per round against the C.2 threshold,
gold counterfactuals right per worker, and label distributions (everyone's, then the
workers who differ most). Only numbers and strings leave this module; the template
escapes every string.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from cfannotate.core.text import counted

WIDTH, HEIGHT = 480, 220
LEFT, RIGHT, TOP, BOTTOM = 44, 12, 14, 40
PLOT_WIDTH = WIDTH - LEFT - RIGHT
PLOT_HEIGHT = HEIGHT - TOP - BOTTOM


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    title: str  # tooltip and accessible name
    series: int = 0  # colour index


@dataclass(frozen=True)
class Tick:
    position: float
    label: str


@dataclass(frozen=True)
class Marker:
    """A vertical line across the plot, e.g. the 18 s threshold."""

    x: float
    label: str


@dataclass(frozen=True)
class Level:
    """A horizontal line across the plot, e.g. the share of gold a worker must get right."""

    y: float
    label: str


@dataclass(frozen=True)
class Point:
    """One dot of a scatter plot; `count` dots that fall on one place are drawn larger."""

    x: float
    y: float
    title: str
    series: int = 0
    count: int = 1

    @property
    def radius(self) -> float:
        return 4 + 1.5 * min(self.count - 1, 4)


@dataclass(frozen=True)
class Region:
    """A shaded rectangle, e.g. where the C.2 rule keeps a worker."""

    x: float
    y: float
    width: float
    height: float
    title: str


@dataclass(frozen=True)
class DataTable:
    """The chart's numbers as a table: what a reader without the picture gets."""

    caption: str
    columns: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class Chart:
    title: str
    description: str  # what a screen reader says instead of the picture
    x_label: str
    y_label: str
    bars: list[Bar]
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    markers: list[Marker] = field(default_factory=list)
    legend: list[tuple[int, str]] = field(default_factory=list)
    y_tick_x: int = LEFT - 6  # where y tick labels end (they are right-aligned)
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    top: int = TOP
    plot_width: int = PLOT_WIDTH
    plot_height: int = PLOT_HEIGHT
    points: list[Point] = field(default_factory=list)
    levels: list[Level] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)
    table: DataTable | None = None

    @property
    def bottom(self) -> int:
        return self.top + self.plot_height

    @property
    def right(self) -> int:
        return self.left + self.plot_width

    @property
    def empty(self) -> bool:
        return not self.bars and not self.points


def _nice_step(top: float, ticks: int = 4) -> float:
    raw = max(top, 1) / ticks
    magnitude = 10 ** math.floor(math.log10(raw))
    for step in (1, 2, 5, 10):
        if raw <= step * magnitude:
            return step * magnitude
    return 10 * magnitude


def _count_ticks(top: int) -> tuple[int, list[Tick]]:
    step = max(1, int(_nice_step(top)))
    ceiling = step * math.ceil(max(top, 1) / step)
    ticks = [
        Tick(TOP + PLOT_HEIGHT * (1 - value / ceiling), str(value))
        for value in range(0, ceiling + 1, step)
    ]
    return ceiling, ticks


def round_time_chart(seconds: Sequence[float], *, threshold: float) -> Chart:
    """Histogram of seconds per round; rounds at or below the threshold drawn apart."""
    bin_width = 6.0
    last = max(120.0, threshold * 2)
    bins = int(last / bin_width)
    counts = [0] * (bins + 1)  # the last bin holds everything slower
    for value in seconds:
        counts[min(int(value // bin_width), bins)] += 1
    ceiling, y_ticks = _count_ticks(max(counts, default=0))
    width = PLOT_WIDTH / (bins + 1)
    bars = []
    rows = []
    for index, count in enumerate(counts):
        if not count:
            continue
        low = index * bin_width
        span = f"{low:.0f} to {low + bin_width:.0f} s" if index < bins else f"{low:.0f} s or more"
        rows.append([span, str(count), "slower" if low + bin_width > threshold else "at or below"])
        height = PLOT_HEIGHT * count / ceiling
        bars.append(
            Bar(
                x=LEFT + index * width + 0.5,
                y=TOP + PLOT_HEIGHT - height,
                width=max(width - 1, 1),
                height=height,
                title=f"{counted(count, 'round')} took {span}",
                series=0 if low + bin_width > threshold else 1,
            )
        )
    x_ticks = [
        Tick(LEFT + (value / bin_width) * width, f"{value:.0f}")
        for value in range(0, int(last) + 1, 30)
    ]
    fast = sum(1 for value in seconds if value <= threshold)
    return Chart(
        title="Time per round",
        description=f"{counted(len(seconds), 'round')}; {fast} took {threshold:g} s or less.",
        x_label="seconds per round (server time)",
        y_label="rounds",
        bars=bars,
        x_ticks=x_ticks,
        y_ticks=y_ticks,
        markers=[Marker(LEFT + (threshold / bin_width) * width, f"{threshold:g} s")],
        legend=[(0, "slower than the threshold"), (1, "at or below it")],
        table=DataTable(
            f"Rounds by seconds taken; the threshold is {threshold:g} s",
            ["Seconds", "Rounds", "Against the threshold"],
            rows,
        ),
    )


def gold_chart(workers: Sequence["WorkerStanding"]) -> Chart:
    """Workers by gold counterfactuals right, stacked by verdict (kept, on hold, filtered)."""
    most = max((w.gold_total for w in workers), default=0)
    if not most:
        return Chart("Gold counterfactuals right", "No gold answers yet.", "", "", [], [], [])
    stack = (0, 2, 1)  # kept at the bottom, filtered on top
    counts = {(right, series): 0 for right in range(most + 1) for series in stack}
    for worker in workers:
        counts[(worker.gold_correct, worker.series)] += 1
    per_column = [sum(counts[(right, series)] for series in stack) for right in range(most + 1)]
    ceiling, y_ticks = _count_ticks(max(per_column))
    width = PLOT_WIDTH / (most + 1)
    bars = []
    for right in range(most + 1):
        base = TOP + PLOT_HEIGHT
        for series in stack:
            count = counts[(right, series)]
            if not count:
                continue
            height = PLOT_HEIGHT * count / ceiling
            base -= height
            bars.append(
                Bar(
                    x=LEFT + right * width + width * 0.15,
                    y=base,
                    width=width * 0.7,
                    height=height,
                    title=(
                        f"{counted(count, 'worker')} with {right} right, {WORKER_VERDICTS[series]}"
                    ),
                    series=series,
                )
            )
    held = any(counts[(right, 2)] for right in range(most + 1))
    shown = [series for series in stack if series != 2 or held]
    rows = [
        [str(right)] + [str(counts[(right, series)]) for series in shown]
        for right in range(most + 1)
        if per_column[right]
    ]
    kept = sum(1 for w in workers if w.qualified)
    return Chart(
        title="Gold counterfactuals right",
        description=f"{counted(len(workers), 'worker')}; {kept} kept.",
        x_label="gold counterfactuals labeled right",
        y_label="workers",
        bars=bars,
        x_ticks=[Tick(LEFT + right * width + width / 2, str(right)) for right in range(most + 1)],
        y_ticks=y_ticks,
        legend=[(series, WORKER_VERDICTS[series]) for series in sorted(shown)],
        table=DataTable(
            "Workers by gold counterfactuals labeled right",
            ["Gold right"] + [f"Workers {WORKER_VERDICTS[series]}" for series in shown],
            rows,
        ),
    )


def label_chart(
    rows: Sequence[tuple[str, Sequence[tuple[str, float]]]], *, labels: Sequence[str]
) -> Chart:
    """Stacked horizontal bars of label shares, one row per (name, shares)."""
    if not rows:
        return Chart("Label distribution", "No labels yet.", "", "", [], [], [])
    height = min(PLOT_HEIGHT / len(rows), 22)
    plot_height = int(height * len(rows))
    bars = []
    y_ticks = []
    for index, (name, shares) in enumerate(rows):
        top = TOP + index * height
        left = 0.0
        for series, (label, share) in enumerate(shares):
            if share <= 0:
                continue
            bars.append(
                Bar(
                    x=LEFT + 60 + left * (PLOT_WIDTH - 60),
                    y=top + 2,
                    width=share * (PLOT_WIDTH - 60),
                    height=height - 4,
                    title=f"{name}: {share:.0%} {label}",
                    series=series,
                )
            )
            left += share
        y_ticks.append(Tick(top + height / 2 + 4, _short(name)))
    return Chart(
        title="Label distribution",
        description="Share of each label: all workers first, then the workers who differ most.",
        x_label="share of labels",
        y_label="",
        bars=bars,
        x_ticks=[
            Tick(LEFT + 60 + share * (PLOT_WIDTH - 60), f"{share:.0%}") for share in (0, 0.5, 1.0)
        ],
        y_ticks=y_ticks,
        legend=list(enumerate(labels)),
        y_tick_x=LEFT + 54,
        height=TOP + plot_height + BOTTOM,
        plot_height=plot_height,
        table=DataTable(
            "Share of each label",
            ["Who", *labels],
            [
                [name, *(f"{dict(shares).get(label, 0.0):.0%}" for label in labels)]
                for name, shares in rows
            ],
        ),
    )


def _short(name: str, limit: int = 14) -> str:
    """A tick label that fits the margin; the table beside the chart has the whole name."""
    return name if len(name) <= limit else name[: limit - 1] + "…"


def _percent_ticks(top: float, height: float) -> list[Tick]:
    return [Tick(top + height * (1 - share), f"{share:.0%}") for share in (0, 0.25, 0.5, 0.75, 1)]


@dataclass(frozen=True)
class WorkerStanding:
    """One worker on the C.2 scatter plot."""

    name: str
    median_seconds: float | None
    gold_correct: int
    gold_total: int
    qualified: bool
    on_hold: bool = False  # short of the gold share before the gold sample: still working

    @property
    def series(self) -> int:
        return 0 if self.qualified else 2 if self.on_hold else 1

    @property
    def verdict(self) -> str:
        return WORKER_VERDICTS[self.series]


WORKER_VERDICTS = {0: "kept", 1: "filtered out", 2: "on hold for more gold"}


def worker_chart(
    workers: Sequence[WorkerStanding], *, min_seconds: float, min_gold_share: float
) -> Chart:
    """Each worker's median time per round against their share of gold right, with the
    C.2 thresholds: kept in the shaded corner, or anywhere on the top line (all gold right)."""
    title = "Workers against the C.2 thresholds"
    drawn = [w for w in workers if w.median_seconds is not None and w.gold_total]
    if not drawn:
        return Chart(title, "No worker has answered a gold round yet.", "", "", [], [], [])
    last = max(60.0, min_seconds * 3)  # slower workers sit on the right edge

    def x_of(seconds: float) -> float:
        return LEFT + PLOT_WIDTH * min(seconds, last) / last

    def y_of(share: float) -> float:
        return TOP + PLOT_HEIGHT * (1 - share)

    places = _worker_places(drawn, x_of, y_of)
    points = _worker_points(places)
    kept = sum(1 for w in drawn if w.qualified)
    unplaced = len(workers) - len(drawn)
    return Chart(
        title=title,
        description=(
            f"{counted(len(drawn), 'worker')} drawn, {kept} kept"
            + (
                f"; {unplaced} without gold answers or timed rounds are only in the worker table."
                if unplaced
                else "."
            )
        ),
        x_label=f"median seconds per round ({last:g} or more at the right edge)",
        y_label="share of gold right",
        bars=[],
        x_ticks=[Tick(x_of(value), f"{value:.0f}") for value in range(0, int(last) + 1, 15)],
        y_ticks=_percent_ticks(TOP, PLOT_HEIGHT),
        markers=[Marker(x_of(min_seconds), f"{min_seconds:g} s")],
        levels=[Level(y_of(min_gold_share), f"{min_gold_share:.0%}")],
        regions=[
            Region(
                x=x_of(min_seconds),
                y=TOP,
                width=LEFT + PLOT_WIDTH - x_of(min_seconds),
                height=y_of(min_gold_share) - TOP,
                title="Kept: slower than the time threshold and enough gold right",
            )
        ],
        points=sorted(points, key=lambda point: -point.count),  # small dots stay on top
        legend=[
            (series, WORKER_VERDICTS[series])
            for series in sorted({0, 1} | {w.series for w in drawn})
        ],
        table=_dot_table(places, min_seconds=min_seconds, min_gold_share=min_gold_share),
    )


def _worker_places(
    drawn: Sequence[WorkerStanding], x_of, y_of
) -> dict[tuple[int, int, int], list[WorkerStanding]]:
    """The workers at each place (pixel) and verdict of the plot: one dot each."""
    places: dict[tuple[int, int, int], list[WorkerStanding]] = {}
    for worker in drawn:
        share = worker.gold_correct / worker.gold_total
        key = (round(x_of(worker.median_seconds)), round(y_of(share)), worker.series)
        places.setdefault(key, []).append(worker)
    return places


def _names(group: Sequence[WorkerStanding], shown: int = 5) -> str:
    names = ", ".join(w.name for w in group[:shown])
    return names + (f" and {len(group) - shown} others" if len(group) > shown else "")


def _span(values: Sequence[float], form: str) -> str:
    low, high = format(min(values), form), format(max(values), form)
    return low if low == high else f"{low} to {high}"


def _dot_figures(group: Sequence[WorkerStanding]) -> tuple[str, str, str]:
    """A dot's median seconds, gold right and share right: one value, or the range its
    workers span within the dot's pixel."""
    golds = {f"{w.gold_correct}/{w.gold_total}" for w in group}
    return (
        _span([w.median_seconds for w in group], ".1f"),
        golds.pop() if len(golds) == 1 else "various",
        _span([w.gold_correct / w.gold_total for w in group], ".0%"),
    )


def _worker_points(places: dict[tuple[int, int, int], list[WorkerStanding]]) -> list[Point]:
    """One dot per place and verdict: workers at the same spot make one larger dot."""
    points = []
    for (x, y, series), group in places.items():
        seconds, gold, _ = _dot_figures(group)
        title = f"{_names(group)}: {seconds} s median, {gold} gold right, {group[0].verdict}"
        points.append(Point(x=x, y=y, title=title, series=series, count=len(group)))
    return points


def _dot_table(
    places: dict[tuple[int, int, int], list[WorkerStanding]],
    *,
    min_seconds: float,
    min_gold_share: float,
) -> DataTable:
    """The plot's dots as rows, the most crowded first: a table as long as the picture has
    dots, not workers (every worker has a row in the page's worker table)."""
    rows = []
    for group in sorted(places.values(), key=lambda group: (-len(group), group[0].name)):
        seconds, gold, share = _dot_figures(group)
        rows.append([_names(group), str(len(group)), seconds, gold, share, group[0].verdict])
    return DataTable(
        f"Each worker's median time per round and gold right, workers at one place of the plot "
        f"together; kept above {min_seconds:g} s with at least {min_gold_share:.0%} of gold "
        "right, or with all gold right",
        ["Workers", "How many", "Median s per round", "Gold right", "Share right", "Verdict"],
        rows,
    )


def position_chart(
    positions: Sequence[tuple[int, dict[str, int]]], *, labels: Sequence[str]
) -> Chart:
    """Stacked bars of label shares per round position: a crowd that tires or games the
    task drifts towards one label late in an assignment."""
    title = "Labels by round position"
    if not positions:
        return Chart(title, "No real round submitted yet.", "", "", [], [], [])
    width = PLOT_WIDTH / len(positions)
    bars = []
    rows = []
    for index, (position, counts) in enumerate(positions):
        total = sum(counts.values())
        rows.append(
            [str(position), str(total)]
            + [f"{counts.get(label, 0) / total:.0%}" if total else "" for label in labels]
        )
        base = TOP + PLOT_HEIGHT
        for series, label in enumerate(labels):
            share = counts.get(label, 0) / total if total else 0.0
            if share <= 0:
                continue
            height = PLOT_HEIGHT * share
            base -= height
            bars.append(
                Bar(
                    x=LEFT + index * width + width * 0.1,
                    y=base,
                    width=max(width * 0.8, 1),
                    height=height,
                    title=f"Round {position}: {share:.0%} {label} of {counted(total, 'judgment')}",
                    series=series % 4,
                )
            )
    every = max(1, math.ceil(len(positions) / 12))
    return Chart(
        title=title,
        description=(
            f"Share of each label in real rounds at each position, {len(positions)} positions."
        ),
        x_label="round position in the assignment",
        y_label="share of labels",
        bars=bars,
        x_ticks=[
            Tick(LEFT + (index + 0.5) * width, str(position))
            for index, (position, _) in enumerate(positions)
            if index % every == 0
        ],
        y_ticks=_percent_ticks(TOP, PLOT_HEIGHT),
        legend=[(series % 4, label) for series, label in enumerate(labels)],
        table=DataTable(
            "Share of each label by round position (real rounds)",
            ["Position", "Judgments", *labels],
            rows,
        ),
    )


AGREEMENT_MEASURES = (
    ("raw", "raw agreement"),
    ("fleiss_kappa", "Fleiss' kappa"),
    ("krippendorff_alpha", "Krippendorff's alpha"),
)


def agreement_chart(rows: Sequence[tuple[str, object]]) -> Chart:
    """Horizontal bars of raw agreement, Fleiss' kappa and Krippendorff's alpha per row of
    the agreement table (`(name, Agreement)`); an undefined statistic draws nothing."""
    title = "Agreement"
    values = [
        (name, [(label, getattr(a, attribute)) for attribute, label in AGREEMENT_MEASURES], a)
        for name, a in rows
    ]
    numbers = [value for _, measures, _ in values for _, value in measures if value is not None]
    table = DataTable(
        "Agreement on counterfactuals judged at least twice",
        ["On", "Items", *(label for _, label in AGREEMENT_MEASURES)],
        [
            [name, str(a.items)]
            + [f"{value:.3f}" if value is not None else "undefined" for _, value in measures]
            for name, measures, a in values
        ],
    )
    if not numbers:
        return Chart(title, "No counterfactual judged twice yet.", "", "", [], [], [], table=table)
    low = min(0.0, math.floor(min(numbers) * 2) / 2)  # down to -0.5 or -1 when needed
    offset = 170  # room for the row names
    span = PLOT_WIDTH - offset

    def x_of(value: float) -> float:
        return LEFT + offset + span * (value - low) / (1 - low)

    group = 3 * 12 + 10
    bars = []
    y_ticks = []
    for index, (name, measures, _) in enumerate(values):
        top = TOP + index * group
        y_ticks.append(Tick(top + group / 2 - 3, _short(name, 30)))
        for series, (label, value) in enumerate(measures):
            if value is None:
                continue
            left, right = sorted((x_of(0.0), x_of(value)))
            bars.append(
                Bar(
                    x=left,
                    y=top + series * 12 + 2,
                    width=max(right - left, 1),
                    height=10,
                    title=f"{name}: {label} {value:.3f}",
                    series=series,
                )
            )
    plot_height = group * len(values)
    ticks = sorted({low, 0.0, 0.5, 1.0})
    return Chart(
        title=title,
        description=(
            "1 is full agreement and 0 what chance would give; below 0 is worse than chance."
        ),
        x_label="",
        y_label="",
        bars=bars,
        x_ticks=[Tick(x_of(value), f"{value:g}") for value in ticks],
        y_ticks=y_ticks,
        markers=[Marker(x_of(0.0), "0")] if low < 0 else [],
        legend=[(series, label) for series, (_, label) in enumerate(AGREEMENT_MEASURES)],
        y_tick_x=LEFT + offset - 6,
        height=TOP + plot_height + BOTTOM,
        plot_height=plot_height,
        table=table,
    )
