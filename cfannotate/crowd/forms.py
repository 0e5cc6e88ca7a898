"""Forms of the campaign page's crowd block: they parse input; the services hold the rules."""

from decimal import Decimal

from django import forms

from cfannotate.core.form_numbers import StrictDecimalField, StrictIntegerField
from cfannotate.crowd.models import BlockScope
from cfannotate.crowd.providers.mturk import MTurkOptions
from cfannotate.crowd.providers.prolific import ProlificOptions
from cfannotate.crowd.services import MAX_PERSONAL_LINK_DAYS, PERSONAL_LINK_DAYS


class MTurkPublishForm(forms.Form):
    title = forms.CharField(max_length=128)
    description = forms.CharField(max_length=2000, widget=forms.Textarea(attrs={"rows": 2}))
    keywords = forms.CharField(max_length=1000, required=False, initial=MTurkOptions.keywords)
    reward = StrictDecimalField(
        label="Reward per assignment (USD)",
        max_digits=6,
        decimal_places=2,
        min_value=Decimal("0.01"),
    )
    assignments = StrictIntegerField(min_value=1, max_value=100_000)
    assignments_per_hit = StrictIntegerField(
        min_value=1, max_value=1000, initial=MTurkOptions.assignments_per_hit
    )
    assignment_minutes = StrictIntegerField(
        label="Time allotted (minutes)", min_value=1, initial=MTurkOptions.assignment_minutes
    )
    auto_approve_days = StrictIntegerField(
        label="Auto-approve after (days)",
        min_value=0,
        max_value=30,
        initial=MTurkOptions.auto_approve_days,
    )
    lifetime_days = StrictIntegerField(
        label="HITs open for (days)", min_value=1, max_value=365, initial=MTurkOptions.lifetime_days
    )
    frame_height = StrictIntegerField(
        label="Frame height (px, 0 = full window)",
        min_value=0,
        max_value=10_000,
        initial=MTurkOptions.frame_height,
    )
    sandbox = forms.BooleanField(
        label="Sandbox (nobody is paid)", required=False, initial=MTurkOptions.sandbox
    )
    locale = forms.CharField(
        label="Worker country", max_length=2, required=False, initial=MTurkOptions.locale
    )
    min_approval_percent = StrictIntegerField(
        label="Minimum approval rate (%)",
        min_value=0,
        max_value=100,
        required=False,
        initial=MTurkOptions.min_approval_percent,
    )
    min_approved_hits = StrictIntegerField(
        label="Minimum approved HITs",
        min_value=0,
        required=False,
        initial=MTurkOptions.min_approved_hits,
    )

    def options(self) -> MTurkOptions:
        data = self.cleaned_data
        return MTurkOptions(
            title=data["title"],
            description=data["description"],
            keywords=data["keywords"] or "",
            reward=data["reward"],
            assignments=data["assignments"],
            assignments_per_hit=data["assignments_per_hit"],
            assignment_minutes=data["assignment_minutes"],
            auto_approve_days=data["auto_approve_days"],
            lifetime_days=data["lifetime_days"],
            frame_height=data["frame_height"],
            sandbox=data["sandbox"],
            locale=(data["locale"] or "").upper(),
            min_approval_percent=data["min_approval_percent"],
            min_approved_hits=data["min_approved_hits"],
        )


class ProlificStudyForm(forms.Form):
    name = forms.CharField(max_length=120)
    description = forms.CharField(max_length=5000, widget=forms.Textarea(attrs={"rows": 2}))
    places = StrictIntegerField(label="Places", min_value=1, max_value=100_000)
    reward_cents = StrictIntegerField(label="Reward (cents or pence)", min_value=1)
    minutes = StrictIntegerField(label="Estimated minutes", min_value=1, max_value=24 * 60)

    def options(self) -> ProlificOptions:
        data = self.cleaned_data
        return ProlificOptions(
            name=data["name"],
            description=data["description"],
            places=data["places"],
            reward_cents=data["reward_cents"],
            minutes=data["minutes"],
        )


class PlacesForm(forms.Form):
    places = StrictIntegerField(label="Places to add", min_value=1, max_value=100_000)


class PlacesCapForm(forms.Form):
    # Empty: the study takes more places only when they are added by hand.
    up_to = StrictIntegerField(label="Up to", required=False, min_value=1, max_value=100_000)


class InvitationLinkForm(forms.Form):
    name = forms.CharField(max_length=120)
    quota = StrictIntegerField(
        min_value=1, required=False, help_text="Assignments it may start; empty for no limit."
    )


class PersonalLinkForm(forms.Form):
    worker = forms.CharField(
        label="Worker", max_length=120, help_text="Their name or id; it labels their judgments."
    )
    days = StrictIntegerField(
        label="Valid for (days)",
        min_value=1,
        max_value=MAX_PERSONAL_LINK_DAYS,
        initial=PERSONAL_LINK_DAYS,
    )


class ApproveForm(forms.Form):
    feedback = forms.CharField(max_length=1024, required=False)


class RejectForm(forms.Form):
    feedback = forms.CharField(max_length=1024)


class BonusForm(forms.Form):
    amount = StrictDecimalField(max_digits=8, decimal_places=2, min_value=Decimal("0.01"))
    reason = forms.CharField(max_length=1024)
    unique_token = forms.CharField(max_length=64, widget=forms.HiddenInput)


class BlockForm(forms.Form):
    reason = forms.CharField(max_length=1024)
    # A researcher blocks from their own campaigns only; blocking everywhere is an
    # administrator's action (the admin site).
    scope = forms.ChoiceField(
        choices=[
            (BlockScope.RESEARCHER, "All my campaigns"),
            (BlockScope.CAMPAIGN, "This campaign only"),
        ],
        initial=BlockScope.RESEARCHER,
        required=False,
    )

    def clean_scope(self) -> str:
        return self.cleaned_data["scope"] or BlockScope.RESEARCHER


def form_error_message(form: forms.Form) -> str:
    """One sentence naming what is wrong in a bound, invalid form."""
    parts = []
    for name, errors in form.errors.items():
        label = form[name].label if name in form.fields else ""
        parts.append(f"{label}: {' '.join(errors)}" if label else " ".join(errors))
    return "Please correct: " + "; ".join(parts)
