"""HTML pages of a researcher's campaigns."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.template.response import TemplateResponse

from cfannotate.campaigns import selectors
from cfannotate.candidates.selectors import latest_run, run_progress
from cfannotate.core.exceptions import NotFound
from cfannotate.core.htmx import HtmxHttpRequest
from cfannotate.labeling.campaign_views import labeling_context

ORIGINALS_PER_PAGE = 25


def _owned_campaign(request, campaign_id: int):
    try:
        return selectors.campaign_get_for_owner(user=request.user, campaign_id=campaign_id)
    except NotFound as error:
        raise Http404(error.message) from None


@login_required
def campaign_detail(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    campaign = _owned_campaign(request, campaign_id)
    page = Paginator(selectors.originals_of(campaign), ORIGINALS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    context = {
        "campaign": campaign,
        "labels": campaign.labels.all(),
        "counts": selectors.campaign_counts(campaign),
        "page": page,
        "candidates": selectors.recent_candidates(campaign),
        "progress": run_progress(run) if (run := latest_run(campaign)) else None,
        **labeling_context(request, campaign),
    }
    template = "campaigns/detail.html"
    if request.htmx and request.htmx.target == "originals":
        template += "#originals"
    return TemplateResponse(request, template, context)
