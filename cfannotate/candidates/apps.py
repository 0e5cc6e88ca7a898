from django.apps import AppConfig


class CandidatesConfig(AppConfig):
    name = "cfannotate.candidates"
    verbose_name = "Candidate counterfactuals"

    def ready(self) -> None:
        from cfannotate.campaigns import page_parts, stages
        from cfannotate.candidates import checks  # noqa: F401 (registers the system checks)
        from cfannotate.candidates.campaign_page import (
            campaign_page_context,
            candidates_facts,
            settings_page_context,
        )

        page_parts.register(campaign_page_context, sections=["generation"])
        page_parts.register(settings_page_context, sections=["settings"])
        stages.register_facts(candidates_facts)
