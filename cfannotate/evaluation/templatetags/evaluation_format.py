"""Shares printed as in Polyjuice's tables: percentages with one decimal."""

from django import template

register = template.Library()

NONE = "\N{EN DASH}"  # what the other tables print for a missing number


@register.filter
def percent(share: float | None) -> str:
    """0.938 -> "93.8"; None -> an en dash."""
    return NONE if share is None else f"{share * 100:.1f}"


@register.filter
def signed_percent(share: float | None) -> str:
    """-0.089 -> "-8.9", 0.02 -> "+2.0": a difference in points."""
    return NONE if share is None else f"{share * 100:+.1f}"
