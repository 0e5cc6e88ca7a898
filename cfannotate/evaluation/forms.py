"""The campaign page's run form: which table, and the optional uploads and sizes."""

from django import forms

from cfannotate.core.form_numbers import StrictFloatField, StrictIntegerField, plain_int
from cfannotate.core.upload_handlers import OneFileFormField
from cfannotate.evaluation import services
from cfannotate.evaluation.models import EvaluationKind


class EvaluationRunForm(forms.Form):
    kind = forms.ChoiceField(choices=EvaluationKind.choices)
    predictions = OneFileFormField(required=False, help_text="JSONL of the model's predictions.")
    training = OneFileFormField(required=False, help_text="JSONL of {text, context?, label}.")
    n = StrictIntegerField(required=False, min_value=1)
    m = StrictIntegerField(required=False, min_value=1)
    test_fraction = StrictFloatField(
        required=False, min_value=0.01, max_value=0.99, initial=services.DEFAULT_TEST_FRACTION
    )
    seeds = forms.CharField(
        required=False, max_length=100, help_text="Comma-separated, e.g. 0,1,2."
    )

    def clean_test_fraction(self) -> float:
        value = self.cleaned_data["test_fraction"]
        return services.DEFAULT_TEST_FRACTION if value is None else value

    def clean_seeds(self) -> list[int]:
        text = self.cleaned_data["seeds"].strip()
        if not text:
            return list(services.DEFAULT_SEEDS)
        seeds = [plain_int(part) for part in text.split(",") if part.strip()]
        if None in seeds:
            raise forms.ValidationError("Give whole numbers separated by commas, e.g. 0,1,2.")
        if not seeds:
            raise forms.ValidationError("Give at least one seed.")
        return seeds
