from django.apps import AppConfig


class CrowdConfig(AppConfig):
    name = "cfannotate.crowd"
    verbose_name = "Crowd workers and platforms"
