from django.apps import AppConfig


class LabelingConfig(AppConfig):
    name = "cfannotate.labeling"
    verbose_name = "Labeling"
