"""Template filters for showing errors (`CfannotateError`) on any page."""

from django import template

register = template.Library()


@register.filter
def field_problems(error) -> list[tuple[str, list[str]]]:
    """An error's `fields` as (where, problems) pairs.

    A template cannot say `error.fields.items` when one of the fields is named "items"
    (the lookup finds the key before the method), as gold rounds' errors are.
    """
    return list(getattr(error, "fields", {}).items())
