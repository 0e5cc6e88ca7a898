from django.apps import AppConfig


class QualityConfig(AppConfig):
    name = "cfannotate.quality"
    verbose_name = "Quality control and aggregation"

    def ready(self) -> None:
        from cfannotate.quality import hooks

        hooks.connect()  # answers labeling's signals and checks (quality/hooks.py)
