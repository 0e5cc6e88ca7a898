"""`{% upload_limits as limits %}`: the dataset upload's limits and quota, for its form."""

from django import template
from django.conf import settings

from cfannotate.core import pending_uploads, tabular

register = template.Library()


@register.simple_tag
def upload_limits() -> dict[str, str]:
    return {
        "megabytes": f"{settings.UPLOAD_MAX_BYTES / (1024 * 1024):g}",
        "rows": f"{settings.UPLOAD_MAX_ROWS:,}",
        "columns": f"{tabular.MAX_COLUMNS:,}",
        "quota_files": f"{pending_uploads.QUOTA_FILES:,}",
        "quota_megabytes": f"{pending_uploads.quota_max_bytes() / (1024 * 1024):g}",
    }
