"""Forms of the candidates pages: uploading the researcher's own candidates and predicted
labels, filtering them."""

from django import forms

from cfannotate.candidates.models import CandidateSource, CandidateStatus, ControlCode
from cfannotate.candidates.selectors import CandidateFilters
from cfannotate.core.api_lists import MAX_ID
from cfannotate.core.form_numbers import StrictFloatField, StrictIntegerField
from cfannotate.core.upload_handlers import OneFileFormField

FLUENCY_BOUND = 1_000.0  # far beyond any log-probability difference of a sentence


class CandidateImportForm(forms.Form):
    file = OneFileFormField(
        help_text="CSV with a header, or JSONL: original_id, text, optional intended_label."
    )
    score_fluency = forms.BooleanField(
        required=False, help_text="Score fluency with the campaign's language model (slower)."
    )


class CandidatePredictionsForm(forms.Form):
    """The researcher's own predicted labels; `predictions.candidate_predictions_upload`
    reads and checks the file."""

    file = OneFileFormField(
        help_text="CSV with a header, or JSONL: id (the candidate's), label, optional "
        "confidence (0 to 1; default 1)."
    )


ORDERING_CHOICES = [
    ("original", "By original, what workers see first"),
    ("fluency", "Most fluent first"),
    ("-fluency", "Least fluent first"),
    ("-created", "Newest first"),
    ("created", "Oldest first"),
]


class CandidateFilterForm(forms.Form):
    """The review page's filters (query parameters); `filters()` once valid."""

    generator = forms.ChoiceField(required=False)
    control_code = forms.ChoiceField(
        required=False, label="Code", choices=[("", "any code"), *ControlCode.choices]
    )
    status = forms.ChoiceField(
        required=False, choices=[("", "any status"), *CandidateStatus.choices]
    )
    source = forms.ChoiceField(
        required=False, choices=[("", "any source"), *CandidateSource.choices]
    )
    min_fluency = StrictFloatField(
        required=False,
        label="Min fluency Δ",
        min_value=-FLUENCY_BOUND,
        max_value=FLUENCY_BOUND,
        widget=forms.NumberInput(attrs={"step": "0.5", "size": "5"}),
    )
    search = forms.CharField(required=False, max_length=200)
    original = StrictIntegerField(
        required=False, min_value=1, max_value=MAX_ID, widget=forms.HiddenInput
    )
    ordering = forms.ChoiceField(required=False, label="Order", choices=ORDERING_CHOICES)

    def __init__(self, *args, generators: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["generator"].choices = [("", "any generator")] + [
            (name, name) for name in generators
        ]

    def filters(self) -> CandidateFilters:
        data = {key: value for key, value in self.cleaned_data.items() if value not in ("", None)}
        return CandidateFilters(**data)
