from django.apps import AppConfig


class LabelingConfig(AppConfig):
    name = "cfannotate.labeling"
    verbose_name = "Labeling"

    def ready(self) -> None:
        from cfannotate.campaigns import page_parts, stages
        from cfannotate.labeling import candidate_review
        from cfannotate.labeling.campaign_views import labeling_context, labeling_facts

        candidate_review.connect()  # answers candidates' hooks (candidates/hooks.py)
        page_parts.register(labeling_context, sections=["labeling"])
        stages.register_facts(labeling_facts)
