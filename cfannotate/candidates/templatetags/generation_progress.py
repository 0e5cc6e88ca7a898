"""`{{ seconds|time_left }}`: a generation run's time left, in words a person reads at a glance."""

from django import template

register = template.Library()


@register.filter
def time_left(seconds: float | None) -> str:
    """45 -> "45 s", 130 -> "2 min 10 s", 3720 -> "1 h 2 min"; None -> ""."""
    if seconds is None:
        return ""
    whole = max(1, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    if minutes:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    return f"{secs} s"
