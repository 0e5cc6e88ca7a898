"""Forms of the candidates pages: uploading the researcher's own candidates."""

from django import forms


class CandidateImportForm(forms.Form):
    file = forms.FileField(
        help_text="CSV with a header, or JSONL: original_id, text, optional intended_label."
    )
    score_fluency = forms.BooleanField(
        required=False, help_text="Score fluency with the campaign's language model (slower)."
    )
