"""The labeling block of the campaign page: progress, the invitation link, open and pause."""

from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from cfannotate.campaigns.access import campaign_owner_required
from cfannotate.campaigns.plain_forms import block_of_section_page, plain_form_fallback
from cfannotate.core.exceptions import CfannotateError
from cfannotate.core.form_numbers import is_digits
from cfannotate.core.htmx import HtmxHttpRequest
from cfannotate.core.text import counted
from cfannotate.core.worker_tokens import join_token
from cfannotate.labeling.ordering import units_order_by_budget
from cfannotate.labeling.selectors import labeling_progress
from cfannotate.labeling.services import labeling_open, labeling_pause

FRAGMENT = "labeling/_campaign_labeling.html"
ORDER_FRAGMENT = "labeling/_labeling_order.html"


def labeling_context(request, campaign) -> dict:
    """What the labeling block needs; the campaign page includes it too."""
    link = reverse("join", kwargs={"token": join_token(campaign.id)})
    return {
        "campaign": campaign,
        "labeling": labeling_progress(campaign),
        "invitation_url": request.build_absolute_uri(link),
    }


def labeling_facts(campaign) -> dict:
    """Facts for the campaign overview's stages (`campaigns.stages.StageFacts`)."""
    progress = labeling_progress(campaign)
    return {
        "units": progress.units,
        "gold_rounds": progress.gold_rounds,
        "training_rounds": progress.training_rounds,
        "assignments": progress.assignments_active
        + progress.assignments_submitted
        + progress.assignments_expired,
        "judgments_done": progress.judgments_done,
        "judgments_needed": progress.judgments_needed,
    }


def _fragment(request, campaign, *, error: str = "", warnings=(), status: int = 200):
    context = {**labeling_context(request, campaign), "error": error, "warnings": warnings}
    return TemplateResponse(request, FRAGMENT, context, status=status)


@campaign_owner_required
@require_GET
@block_of_section_page
def labeling_block(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    return _fragment(request, request.campaign)


@campaign_owner_required
@require_POST
@plain_form_fallback
def labeling_open_view(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    campaign = request.campaign
    try:
        warnings = labeling_open(campaign=campaign)
    except CfannotateError as error:
        return _fragment(request, campaign, error=error.message, status=error.status_code)
    return _fragment(request, campaign, warnings=warnings)


@campaign_owner_required
@require_POST
@plain_form_fallback
def labeling_pause_view(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    campaign = request.campaign
    try:
        labeling_pause(campaign=campaign)
    except CfannotateError as error:
        return _fragment(request, campaign, error=error.message, status=error.status_code)
    return _fragment(request, campaign)


def _order_fragment(request, campaign, *, message: str = "", error: str = "", status: int = 200):
    context = {"campaign": campaign, "message": message, "error": error}
    return TemplateResponse(request, ORDER_FRAGMENT, context, status=status)


@campaign_owner_required
@require_POST
@plain_form_fallback
def labeling_order_view(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """Corpus-level selection: the most diverse `budget` originals are labeled first."""
    campaign = request.campaign
    raw = request.POST.get("budget", "").strip()
    try:
        budget = int(raw) if is_digits(raw) else -1
        summary = units_order_by_budget(campaign=campaign, budget=budget)
    except CfannotateError as error:
        return _order_fragment(request, campaign, error=error.message, status=error.status_code)
    message = (
        f"The {summary.originals} most diverse of the open originals (budget {summary.budget}) "
        f"come first: {counted(summary.units, 'unit')} moved to the front."
    )
    return _order_fragment(request, campaign, message=message)


@campaign_owner_required
@require_POST
@plain_form_fallback
def labeling_priority_view(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """Model in the loop (§4.4): originals the baseline gets wrong or is unsure of first."""
    from cfannotate.campaigns.priority import originals_prioritize

    campaign = request.campaign
    try:
        summary = originals_prioritize(campaign=campaign)
    except CfannotateError as error:
        return _order_fragment(request, campaign, error=error.message, status=error.status_code)
    message = (
        f"Prioritized {summary.originals} originals with the {summary.source} model: it gets "
        f"{summary.wrong} wrong; those and the ones it is unsure of are labeled first."
    )
    return _order_fragment(request, campaign, message=message)
