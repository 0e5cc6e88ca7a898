from django.apps import AppConfig


class CandidatesConfig(AppConfig):
    name = "cfannotate.candidates"
    verbose_name = "Candidate counterfactuals"

    def ready(self) -> None:
        from cfannotate.candidates import checks  # noqa: F401 (registers the system checks)
