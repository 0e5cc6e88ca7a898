"""The quality page's two long lists, workers and decisions: their filters (query
parameters, each list under its own prefix so both keep their state in one address)."""

from django import forms

from cfannotate.quality.models import DecisionAction, DecisionState

MAX_SEARCH = 200
# The worker table's verdicts (`selectors.VERDICT_FILTERS`), as the page names them.
VERDICT_NAMES = {
    "filtered": "filtered",
    "on_hold": "on hold",
    "kept": "kept",
    "working": "still working",
}


def worker_search() -> forms.CharField:
    """Both lists' search: part of a worker's id on their platform, any case."""
    return forms.CharField(
        required=False,
        max_length=MAX_SEARCH,
        label="Worker id contains",
        widget=forms.TextInput(attrs={"type": "search", "size": "14"}),
    )


class WorkerListForm(forms.Form):
    """The worker table's filters: `workers-verdict`, `workers-q` (its page: `workers-page`)."""

    prefix = "workers"

    verdict = forms.ChoiceField(
        required=False, choices=[("", "every verdict"), *VERDICT_NAMES.items()]
    )
    q = worker_search()

    def filters(self) -> dict:
        return {"verdict": self.cleaned_data["verdict"], "search": self.cleaned_data["q"].strip()}


class DecisionListForm(forms.Form):
    """The decisions' filters: `decisions-state`, `decisions-action`, `decisions-q` (its page:
    `decisions-page`)."""

    prefix = "decisions"

    state = forms.ChoiceField(required=False, choices=[("", "any state"), *DecisionState.choices])
    action = forms.ChoiceField(
        required=False, label="Decision", choices=[("", "any decision"), *DecisionAction.choices]
    )
    q = worker_search()

    def filters(self) -> dict:
        return {
            "state": self.cleaned_data["state"],
            "action": self.cleaned_data["action"],
            "search": self.cleaned_data["q"].strip(),
        }
