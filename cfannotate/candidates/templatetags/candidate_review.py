"""`{{ reason|drop_reason }}`: why the filters dropped a candidate, in words;
`{{ generation|for_original:id }}`: what generation made of an original, on the review page."""

from django import template

from cfannotate.candidates.adapter import DROP_REASON_LABELS

register = template.Library()


@register.filter
def drop_reason(reason: str | None) -> str:
    """The label of a `dropped_by` value; an unknown one as it is stored."""
    if not reason:
        return ""
    return DROP_REASON_LABELS.get(reason, reason.replace("_", " "))


@register.filter
def for_original(generation: dict | None, original_id: int):
    """The OriginalGeneration of `original_id` in the review page's map, or None."""
    return (generation or {}).get(original_id)
