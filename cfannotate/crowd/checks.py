"""System checks for the crowd platform settings (ids crowd.E001, crowd.W001)."""

from decimal import Decimal, InvalidOperation

from django.conf import settings
from django.core.checks import Error, Warning, register


@register()
def crowd_settings_check(app_configs, **kwargs):
    problems = []
    try:
        maximum = Decimal(settings.CROWD_MAX_BONUS)
        valid = maximum.is_finite() and maximum > 0
    except (InvalidOperation, TypeError, ValueError):
        valid = False
    if not valid:
        problems.append(
            Error(
                "CFANNOTATE_MAX_BONUS must be a positive amount, not "
                f"{settings.CROWD_MAX_BONUS!r}.",
                id="crowd.E001",
            )
        )
    insecure = [o for o in settings.CROWD_MTURK_FRAME_ORIGINS if not o.startswith("https://")]
    if insecure and not settings.DEBUG:
        problems.append(
            Warning(
                "CFANNOTATE_MTURK_FRAME_ORIGINS lists origins that are not HTTPS: "
                + ", ".join(insecure),
                hint="Only MTurk's own https:// origins should frame worker pages.",
                id="crowd.W001",
            )
        )
    return problems
