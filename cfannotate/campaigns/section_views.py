"""The section pages of a campaign: data, generation, labeling and platforms, exports.

Each page shows one stage of the campaign and computes only what it shows: its parts from
the apps above campaigns come through `page_parts` (registered for the section by name).
The overview is `views.campaign_detail`; review, gold, quality and settings are their
apps' own pages, reached through the same section navigation (`sections.py`).
"""

from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET

from cfannotate.campaigns import selectors
from cfannotate.campaigns.access import campaign_owner_required
from cfannotate.campaigns.page_parts import parts_context
from cfannotate.campaigns.upload_views import waiting_upload_context
from cfannotate.core.htmx import HtmxHttpRequest
from cfannotate.core.pagination import page_of

ORIGINALS_PER_PAGE = 25


@campaign_owner_required
@require_GET
def campaign_data(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """The labels, the upload of originals (with a file left waiting) and the originals table."""
    campaign = request.campaign
    page = page_of(selectors.originals_of(campaign), ORIGINALS_PER_PAGE, request.GET.get("page"))
    context = {"campaign": campaign, "labels": campaign.labels.all(), "page": page}
    template = "campaigns/data.html"
    if request.htmx and request.htmx.target == "originals":
        template += "#originals"
    else:
        context.update(waiting_upload_context(request, campaign))
    return TemplateResponse(request, template, context)


@campaign_owner_required
@require_GET
def campaign_generation(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """Generation runs and their progress, the import of candidates, the first candidates."""
    campaign = request.campaign
    context = {"campaign": campaign, **parts_context(request, campaign, section="generation")}
    return TemplateResponse(request, "campaigns/generation.html", context)


@campaign_owner_required
@require_GET
def campaign_labeling(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """Open and pause labeling, the labeling order, and the crowd platforms (loaded after)."""
    campaign = request.campaign
    context = {"campaign": campaign, **parts_context(request, campaign, section="labeling")}
    return TemplateResponse(request, "campaigns/labeling.html", context)


@campaign_owner_required
@require_GET
def campaign_exports(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """The download links with what each file holds now, and the model evaluation (loaded
    after the page)."""
    campaign = request.campaign
    context = {"campaign": campaign, **parts_context(request, campaign, section="exports")}
    return TemplateResponse(request, "campaigns/exports.html", context)
