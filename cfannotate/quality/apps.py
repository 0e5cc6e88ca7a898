from django.apps import AppConfig


class QualityConfig(AppConfig):
    name = "cfannotate.quality"
    verbose_name = "Quality control and aggregation"

    def ready(self) -> None:
        from cfannotate.campaigns import stages
        from cfannotate.quality import hooks
        from cfannotate.quality.campaign_page import quality_facts

        hooks.connect()  # answers labeling's signals and checks (quality/hooks.py)
        stages.register_facts(quality_facts)
