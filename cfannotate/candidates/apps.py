from django.apps import AppConfig


class CandidatesConfig(AppConfig):
    name = "cfannotate.candidates"
    verbose_name = "Candidate counterfactuals"
