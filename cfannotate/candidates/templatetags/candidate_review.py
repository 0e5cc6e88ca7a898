"""`{{ reason|drop_reason }}`: why the filters dropped a candidate, in words."""

from django import template

from cfannotate.candidates.adapter import DROP_REASON_LABELS

register = template.Library()


@register.filter
def drop_reason(reason: str | None) -> str:
    """The label of a `dropped_by` value; an unknown one as it is stored."""
    if not reason:
        return ""
    return DROP_REASON_LABELS.get(reason, reason.replace("_", " "))
