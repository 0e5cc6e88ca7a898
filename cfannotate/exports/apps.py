"""The exports app: streamed JSONL and CSV files of a campaign's labeled counterfactuals."""

from django.apps import AppConfig


class ExportsConfig(AppConfig):
    name = "cfannotate.exports"
    verbose_name = "Exports"

    def ready(self) -> None:
        from cfannotate.campaigns import page_parts
        from cfannotate.exports.views import exports_page_context

        page_parts.register(exports_page_context, sections=["exports"])
