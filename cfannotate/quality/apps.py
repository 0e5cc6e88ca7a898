from django.apps import AppConfig


class QualityConfig(AppConfig):
    name = "cfannotate.quality"
    verbose_name = "Quality control and aggregation"
