"""Generation runs on the campaign page: start, live progress (htmx polling), cancel, retry."""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET, require_POST

from cfannotate.campaigns.selectors import campaign_get_for_owner
from cfannotate.candidates import runs, selectors
from cfannotate.candidates.models import GenerationRun
from cfannotate.core.exceptions import CfannotateError, NotFound
from cfannotate.core.htmx import HtmxHttpRequest

FRAGMENT = "candidates/_run_progress.html"


def _campaign(request, campaign_id: int):
    try:
        return campaign_get_for_owner(user=request.user, campaign_id=campaign_id)
    except NotFound as error:
        raise Http404(error.message) from None


def _fragment(request, campaign, *, error: str = "", status: int = 200) -> HttpResponse:
    run = selectors.latest_run(campaign)
    context = {
        "campaign": campaign,
        "progress": selectors.run_progress(run) if run else None,
        "error": error,
    }
    return TemplateResponse(request, FRAGMENT, context, status=status)


@login_required
@require_GET
def run_progress(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    return _fragment(request, _campaign(request, campaign_id))


@login_required
@require_POST
def run_start(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    campaign = _campaign(request, campaign_id)
    try:
        runs.generation_run_start(campaign=campaign)
    except CfannotateError as error:
        return _fragment(request, campaign, error=error.message, status=error.status_code)
    return _fragment(request, campaign)


def _run_action(request, campaign_id: int, run_id: int, action) -> HttpResponse:
    campaign = _campaign(request, campaign_id)
    run = get_object_or_404(GenerationRun, pk=run_id, campaign=campaign)
    try:
        action(run=run)
    except CfannotateError as error:
        return _fragment(request, campaign, error=error.message, status=error.status_code)
    return _fragment(request, campaign)


@login_required
@require_POST
def run_cancel(request: HtmxHttpRequest, campaign_id: int, run_id: int) -> HttpResponse:
    return _run_action(request, campaign_id, run_id, runs.generation_run_cancel)


@login_required
@require_POST
def run_retry(request: HtmxHttpRequest, campaign_id: int, run_id: int) -> HttpResponse:
    return _run_action(request, campaign_id, run_id, runs.generation_run_retry)
