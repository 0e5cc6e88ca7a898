"""The candidates blocks of the campaign page (htmx).

Generation runs: start, live progress (polling), cancel, retry. Imports: the upload form
for the researcher's own candidates.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRefresh

from cfannotate.campaigns.selectors import campaign_get_for_owner
from cfannotate.candidates import runs, selectors, services
from cfannotate.candidates.forms import CandidateImportForm
from cfannotate.candidates.models import GenerationRun
from cfannotate.candidates.uploads import uploaded_bytes
from cfannotate.core.exceptions import CfannotateError, InvalidInput, NotFound
from cfannotate.core.htmx import HtmxHttpRequest

FRAGMENT = "candidates/_run_progress.html"
IMPORT_FRAGMENT = "candidates/_import.html"


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


def _import_fragment(
    request, campaign, form: CandidateImportForm, *, error: CfannotateError | None = None
) -> HttpResponse:
    # htmx 2 does not swap 4xx responses, so the form with its errors comes back as 200 to
    # htmx; a plain form post (no JavaScript) gets the error's own status.
    status = 200 if error is None or request.htmx else error.status_code
    context = {"campaign": campaign, "form": form, "error": error}
    return TemplateResponse(request, IMPORT_FRAGMENT, context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def candidate_import(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """The upload form; a valid file reloads the campaign page with what was imported."""
    campaign = _campaign(request, campaign_id)
    if request.method == "GET":
        return _import_fragment(request, campaign, CandidateImportForm())
    form = CandidateImportForm(request.POST, request.FILES)
    if not form.is_valid():
        fields = {name: list(problems) for name, problems in form.errors.items()}
        error = InvalidInput("Choose a CSV or JSONL file to upload.", fields=fields)
        return _import_fragment(request, campaign, form, error=error)
    upload = form.cleaned_data["file"]
    try:
        summary = services.candidates_import(
            campaign=campaign,
            file_name=upload.name,
            content=uploaded_bytes(upload),
            score_fluency=form.cleaned_data["score_fluency"],
        )
    except CfannotateError as error:
        return _import_fragment(request, campaign, form, error=error)
    messages.success(
        request,
        f"Imported {summary.imported} candidates for {summary.originals} originals; "
        "they are selected into labeling units in the background.",
    )
    if request.htmx:
        return HttpResponseClientRefresh()
    return redirect("campaign-detail", campaign_id=campaign.id)
