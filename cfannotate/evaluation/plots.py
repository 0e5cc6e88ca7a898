"""Geometry of the evaluation charts, drawn by `quality/_chart.html` as inline SVG.

Two charts: Table 2's accuracies with their bootstrap intervals, and Table 3's comp
against aug with ± one standard deviation over splits. Axes, bars and ticks reuse the
quality charts' geometry (`cfannotate.quality.plots`); an interval is a thin bar with caps.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from cfannotate.core.text import counted
from cfannotate.quality.plots import LEFT, PLOT_HEIGHT, PLOT_WIDTH, TOP, Bar, Chart, Tick

INTERVAL_SERIES = 4  # drawn in the foreground colour (static/css: .chart .series-4)
_CAP_WIDTH = 10.0
_STROKE = 1.5


@dataclass(frozen=True)
class BarValue:
    name: str  # tooltip and accessible name
    value: float  # a share in [0, 1]
    low: float
    high: float
    series: int = 0


def _y(share: float) -> float:
    return TOP + PLOT_HEIGHT * (1 - min(max(share, 0.0), 1.0))


def _percent_ticks() -> list[Tick]:
    return [Tick(_y(share), f"{share:.0%}") for share in (0, 0.25, 0.5, 0.75, 1.0)]


def _interval(center: float, low: float, high: float, title: str) -> list[Bar]:
    top, bottom = _y(high), _y(low)
    cap = [
        Bar(center - _CAP_WIDTH / 2, y - _STROKE / 2, _CAP_WIDTH, _STROKE, title, INTERVAL_SERIES)
        for y in (top, bottom)
    ]
    stem = Bar(
        center - _STROKE / 2, top, _STROKE, max(bottom - top, _STROKE), title, INTERVAL_SERIES
    )
    return [stem, *cap]


def grouped_bar_chart(
    groups: Sequence[tuple[str, Sequence[BarValue]]],
    *,
    title: str,
    description: str,
    interval_name: str,
    legend: Sequence[tuple[int, str]] = (),
) -> Chart:
    """Bars of shares in groups along x, each with its interval whisker; y from 0 to 100%."""
    if not groups:
        return Chart(title, "Nothing to draw yet.", "", "", [], [], [])
    group_width = PLOT_WIDTH / len(groups)
    bars: list[Bar] = []
    x_ticks = []
    for index, (group_name, values) in enumerate(groups):
        start = LEFT + index * group_width + group_width * 0.15
        bar_width = group_width * 0.7 / max(len(values), 1)
        for position, item in enumerate(values):
            x = start + position * bar_width
            top = _y(item.value)
            bars.append(
                Bar(
                    x=x + 1,
                    y=top,
                    width=max(bar_width - 2, 1),
                    height=TOP + PLOT_HEIGHT - top,
                    title=f"{item.name}: {item.value:.1%}",
                    series=item.series,
                )
            )
            bars.extend(
                _interval(
                    x + bar_width / 2,
                    item.low,
                    item.high,
                    f"{item.name}: {interval_name} {item.low:.1%} to {item.high:.1%}",
                )
            )
        x_ticks.append(Tick(LEFT + (index + 0.5) * group_width, group_name))
    return Chart(
        title=title,
        description=description,
        x_label="",
        y_label="accuracy",
        bars=bars,
        x_ticks=x_ticks,
        y_ticks=_percent_ticks(),
        legend=list(legend),
    )


def contrast_chart(result: dict) -> Chart:
    """Table 2: accuracy on the originals and the contrast set, and consistency, with 95% CIs."""
    rows = [
        ("Originals", result["original_accuracy"], 0),
        ("Contrast set", result["contrast_accuracy"], 1),
        ("Consistency", result["consistency"], 2),
    ]
    groups = [
        (name, [BarValue(name, figure["value"], figure["low"], figure["high"], series)])
        for name, figure, series in rows
    ]
    confidence = result.get("bootstrap", {}).get("confidence", 0.95)
    drop = result["drop"]["value"]
    return grouped_bar_chart(
        groups,
        title="Accuracy on originals and contrast set",
        description=(
            f"{result['original_accuracy']['value']:.1%} on {result['originals']} originals, "
            f"{result['contrast_accuracy']['value']:.1%} on {result['counterfactuals']} contrast "
            f"counterfactuals ({drop:+.1%}); consistency {result['consistency']['value']:.1%}. "
            f"Whiskers: {confidence:.0%} bootstrap intervals."
        ),
        interval_name=f"{confidence:.0%} interval",
    )


def augmentation_chart(result: dict) -> Chart:
    """Table 3: comp and aug on held-out originals and on the held-out contrast set, ± std."""
    groups = []
    for name, column in (("Held-out originals", "original"), ("Contrast set", "contrast")):
        values = []
        for series, model in enumerate(("comp", "aug")):
            figure = result[f"{model}_{column}_accuracy"]
            mean, std = figure["mean"], figure["std"]
            values.append(
                BarValue(f"{model} on {name.lower()}", mean, mean - std, mean + std, series)
            )
        groups.append((name, values))
    splits = len(result.get("splits", []))
    return grouped_bar_chart(
        groups,
        title="comp against aug",
        description=(
            f"n = {result['n']} originals plus m = {result['m']} more originals (comp) or "
            f"counterfactuals (aug); mean over {counted(splits, 'split')}, whiskers ± one std."
        ),
        interval_name="± std",
        legend=[(0, f"comp (n + {result['m']} originals)"), (1, f"aug (n + {result['m']} x̂)")],
    )
