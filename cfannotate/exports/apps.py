"""The exports app: streamed JSONL and CSV files of a campaign's labeled counterfactuals."""

from django.apps import AppConfig


class ExportsConfig(AppConfig):
    name = "cfannotate.exports"
    verbose_name = "Exports"
