from django.apps import AppConfig


class CrowdConfig(AppConfig):
    name = "cfannotate.crowd"
    verbose_name = "Crowd workers and platforms"

    def ready(self) -> None:
        from cfannotate.crowd import checks  # noqa: F401 (registers the system checks)
