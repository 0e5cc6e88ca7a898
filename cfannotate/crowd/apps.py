from django.apps import AppConfig


class CrowdConfig(AppConfig):
    name = "cfannotate.crowd"
    verbose_name = "Crowd workers and platforms"

    def ready(self) -> None:
        from cfannotate.campaigns import stages
        from cfannotate.crowd import checks  # noqa: F401 (registers the system checks)
        from cfannotate.crowd.blocks import raise_if_blocked
        from cfannotate.crowd.campaign_page import crowd_facts
        from cfannotate.labeling import hooks

        # A block ends work in progress as a return does; the worker is told which it was.
        hooks.register(hooks.return_explanations, raise_if_blocked)
        stages.register_facts(crowd_facts)
