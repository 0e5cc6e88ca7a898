from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "cfannotate.core"
    verbose_name = "cfannotate core"

    def ready(self) -> None:
        from cfannotate.core import checks  # noqa: F401  (registers system checks)
