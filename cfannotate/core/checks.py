"""System checks for the deployment (ids cfannotate.E0xx / W0xx)."""

from django.conf import settings
from django.core import checks


@checks.register(checks.Tags.security, deploy=True)
def check_production_mode(app_configs, **kwargs):
    messages = []
    if not getattr(settings, "PRODUCTION", False):
        messages.append(
            checks.Warning(
                "CFANNOTATE_PRODUCTION is not set, so development defaults are in force.",
                hint="Set CFANNOTATE_PRODUCTION=1 for a deployment.",
                id="cfannotate.W001",
            )
        )
    if settings.DATABASES["default"]["ENGINE"].endswith("sqlite3") and getattr(
        settings, "PRODUCTION", False
    ):
        messages.append(
            checks.Warning(
                "Production is running on SQLite; several labeling servers and GPU workers "
                "need one PostgreSQL database to share.",
                hint="Set DATABASE_URL=postgres://...",
                id="cfannotate.W002",
            )
        )
    return messages
