"""HTML pages of a researcher's campaigns."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from cfannotate.campaigns import selectors, services
from cfannotate.campaigns.access import campaign_owner_required
from cfannotate.campaigns.forms import CampaignCreateForm, CampaignSettingsForm, errors_onto_form
from cfannotate.campaigns.page_parts import parts_context
from cfannotate.campaigns.sections import SECTION_BY_KEY, STAGE_SECTIONS
from cfannotate.campaigns.stages import campaign_stages, next_stage, stage_facts
from cfannotate.campaigns.task_templates import task_template_summaries
from cfannotate.core.exceptions import CfannotateError
from cfannotate.core.htmx import HtmxHttpRequest
from cfannotate.core.text import sentence


def home(request: HtmxHttpRequest) -> HttpResponse:
    """The landing page: a signed-in researcher's campaigns, or how to start."""
    campaigns = (
        selectors.campaigns_for_owner(request.user) if request.user.is_authenticated else None
    )
    return TemplateResponse(request, "core/home.html", {"campaigns": campaigns})


@campaign_owner_required
@require_GET
def campaign_detail(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """The overview: where the campaign stands, stage by stage, and the next step to take."""
    campaign = request.campaign
    if request.GET.get("page"):  # the originals' pages before they had a section of their own
        url = reverse("campaign-data", args=[campaign.id])
        return redirect(f"{url}?{request.GET.urlencode()}")
    facts = stage_facts(campaign)
    stages = campaign_stages(campaign, facts)
    step = next_stage(stages)
    context = {
        "campaign": campaign,
        "facts": facts,
        "stages": [(stage, SECTION_BY_KEY[STAGE_SECTIONS[stage.key]]) for stage in stages],
        "next_stage": step,
        "next_section": SECTION_BY_KEY[STAGE_SECTIONS[step.key]],
    }
    return TemplateResponse(request, "campaigns/detail.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def campaign_new(request: HtmxHttpRequest) -> HttpResponse:
    """Create a campaign from a task template; its overview then points to the upload."""
    form = CampaignCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            campaign = services.campaign_create(owner=request.user, **form.service_arguments())
        except services.CampaignAlreadyCreated as done:
            messages.info(request, f"{done.message} It was not created twice.")
            return redirect("campaign-detail", campaign_id=done.campaign.id)
        except CfannotateError as error:
            errors_onto_form(form, error)
        else:
            messages.success(
                request,
                sentence(f"Created {campaign.name}")
                + " Upload its dataset of labeled originals next.",
            )
            return redirect("campaign-detail", campaign_id=campaign.id)
    context = {"form": form, "templates": task_template_summaries()}
    status = 400 if form.errors else 200
    return TemplateResponse(request, "campaigns/new.html", context, status=status)


@campaign_owner_required
@require_http_methods(["GET", "POST"])
def campaign_settings(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """Every per-stage setting on one page; saved through the same checks as the API."""
    from cfannotate.campaigns.generator_settings import (
        engine_choices,
        engine_defaults,
        generator_catalog,
        targeting_choices,
    )

    campaign = request.campaign
    slices, codes = targeting_choices()
    engines, server_apis = engine_choices()
    form = CampaignSettingsForm(
        request.POST or None,
        instance=campaign,
        catalog=generator_catalog(),
        slices=slices,
        codes=codes,
        engines=engines,
        server_apis=server_apis,
        engine_defaults=engine_defaults(),
    )
    saved = None
    if request.method == "POST" and form.is_valid():
        changed = form.changed_settings()
        try:
            if changed:
                campaign = services.campaign_update(campaign=campaign, settings=changed)
        except CfannotateError as error:
            errors_onto_form(form, error)
        else:
            saved = sorted(changed)
    context = {
        "campaign": campaign,
        "form": form,
        "saved": saved,
        **parts_context(request, campaign, section="settings"),
    }
    template = "campaigns/settings.html"
    if request.htmx:
        template += "#settings-form"
    return TemplateResponse(request, template, context, status=400 if form.errors else 200)
