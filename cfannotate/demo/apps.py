from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo: a campaign played end to end with every app (`manage.py demo_setup`).
    It sits at the end of the app line (docs/architecture.md), so nothing depends on it."""

    name = "cfannotate.demo"
    verbose_name = "Demo"
