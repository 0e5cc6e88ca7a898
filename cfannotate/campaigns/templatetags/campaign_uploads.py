"""`{% upload_limits as limits %}`: the dataset upload's size and row limits, for its form."""

from django import template
from django.conf import settings

register = template.Library()


@register.simple_tag
def upload_limits() -> dict[str, str]:
    return {
        "megabytes": f"{settings.UPLOAD_MAX_BYTES / (1024 * 1024):g}",
        "rows": f"{settings.UPLOAD_MAX_ROWS:,}",
    }
