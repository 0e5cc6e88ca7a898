"""The evaluation app: a campaign's counterfactuals as a contrast set and as training data."""

from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "cfannotate.evaluation"
    verbose_name = "Model evaluation"
