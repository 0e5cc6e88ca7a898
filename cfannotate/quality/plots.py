"""Geometry of the quality page's charts, drawn as inline SVG by `quality/_chart.html`.

Three charts a researcher reads at a glance: time per round against the C.2 threshold,
gold counterfactuals right per worker, and label distributions (everyone's, then the
workers who differ most). Only numbers and strings leave this module; the template
escapes every string.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

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

    @property
    def bottom(self) -> int:
        return self.top + self.plot_height

    @property
    def right(self) -> int:
        return self.left + self.plot_width

    @property
    def empty(self) -> bool:
        return not self.bars


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
    for index, count in enumerate(counts):
        if not count:
            continue
        low = index * bin_width
        span = f"{low:.0f} to {low + bin_width:.0f} s" if index < bins else f"{low:.0f} s or more"
        height = PLOT_HEIGHT * count / ceiling
        bars.append(
            Bar(
                x=LEFT + index * width + 0.5,
                y=TOP + PLOT_HEIGHT - height,
                width=max(width - 1, 1),
                height=height,
                title=f"{count} round(s) took {span}",
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
        description=f"{len(seconds)} rounds; {fast} took {threshold:g} s or less.",
        x_label="seconds per round (server time)",
        y_label="rounds",
        bars=bars,
        x_ticks=x_ticks,
        y_ticks=y_ticks,
        markers=[Marker(LEFT + (threshold / bin_width) * width, f"{threshold:g} s")],
        legend=[(0, "slower than the threshold"), (1, "at or below it")],
    )


def gold_chart(results: Sequence[tuple[int, int, bool]]) -> Chart:
    """Workers by gold counterfactuals right; results are (right, total, qualified)."""
    most = max((total for _, total, _ in results), default=0)
    if not most:
        return Chart("Gold counterfactuals right", "No gold answers yet.", "", "", [], [], [])
    counts = {(right, qualified): 0 for right in range(most + 1) for qualified in (True, False)}
    for right, _, qualified in results:
        counts[(right, qualified)] += 1
    per_column = [counts[(right, True)] + counts[(right, False)] for right in range(most + 1)]
    ceiling, y_ticks = _count_ticks(max(per_column))
    width = PLOT_WIDTH / (most + 1)
    bars = []
    for right in range(most + 1):
        base = TOP + PLOT_HEIGHT
        for qualified in (True, False):
            count = counts[(right, qualified)]
            if not count:
                continue
            height = PLOT_HEIGHT * count / ceiling
            base -= height
            verdict = "kept" if qualified else "filtered out"
            bars.append(
                Bar(
                    x=LEFT + right * width + width * 0.15,
                    y=base,
                    width=width * 0.7,
                    height=height,
                    title=f"{count} worker(s) with {right} right, {verdict}",
                    series=0 if qualified else 1,
                )
            )
    return Chart(
        title="Gold counterfactuals right",
        description=f"{len(results)} workers; {sum(1 for r in results if r[2])} kept.",
        x_label="gold counterfactuals labeled right",
        y_label="workers",
        bars=bars,
        x_ticks=[Tick(LEFT + right * width + width / 2, str(right)) for right in range(most + 1)],
        y_ticks=y_ticks,
        legend=[(0, "kept"), (1, "filtered out")],
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
        y_ticks.append(Tick(top + height / 2 + 4, name))
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
    )
