"""The candidates blocks of the campaign page and the review page (htmx).

Generation runs: start, live progress (polling), cancel, retry. Imports: the upload form
for the researcher's own candidates, then the background import's progress and cancel.
Review: filter, accept, reject, edit (row by row or ticked in bulk), and the upload form
for the researcher's predicted labels. "Promote to gold" is labeling's page
(`labeling/gold_views.py`).
"""

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.defaultfilters import pluralize
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRefresh, trigger_client_event

from cfannotate.campaigns.access import campaign_owner_required
from cfannotate.campaigns.plain_forms import block_of_section_page, plain_form_fallback
from cfannotate.candidates import imports, predictions, review, runs, selectors
from cfannotate.candidates.forms import (
    CandidateFilterForm,
    CandidateImportForm,
    CandidatePredictionsForm,
)
from cfannotate.candidates.models import CandidateImport, GenerationRun, ImportState
from cfannotate.candidates.uploads import uploaded_bytes
from cfannotate.core.exceptions import CfannotateError, InvalidInput, NotFound
from cfannotate.core.form_numbers import is_digits
from cfannotate.core.htmx import HtmxHttpRequest
from cfannotate.core.pagination import page_of
from cfannotate.core.text import counted

FRAGMENT = "candidates/_run_progress.html"
RECENT_FRAGMENT = "candidates/_recent.html"
IMPORT_FRAGMENT = "candidates/_import.html"
# Sent when a poll finds the run it watched finished; the candidates table listens.
CANDIDATES_CHANGED = "candidates-changed"


def _fragment(request, campaign, *, error: str = "", status: int = 200) -> HttpResponse:
    run = selectors.latest_run(campaign)
    progress = selectors.run_progress(run) if run else None
    active = progress is not None and progress.active
    context = {
        "campaign": campaign,
        "progress": progress,
        # Shown once no run is active; not read on every poll of a large campaign.
        "generation": None if active else selectors.generation_overview(campaign),
        "error": error,
    }
    return TemplateResponse(request, FRAGMENT, context, status=status)


@campaign_owner_required
@require_GET
@block_of_section_page
def run_progress(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """The progress block; the poll that finds its watched run ended (`?watching=<run id>`)
    also tells the page to fetch the candidates again, without a reload."""
    response = _fragment(request, request.campaign)
    watching = request.GET.get("watching", "")
    progress = response.context_data["progress"]
    if watching.isdigit() and progress is not None and not progress.active:
        trigger_client_event(response, CANDIDATES_CHANGED)
        _announce(response, f"{counted(progress.candidates, 'candidate')} stored.")
    return response


def _announce(response: TemplateResponse, detail: str = "") -> TemplateResponse:
    """Say the run's state in the page's status line (`#generation-status`, outside the
    polled block: a live region replaced on every poll is read unevenly, if at all)."""
    progress = response.context_data["progress"]
    if progress is not None:
        run = progress.run
        sentence = f"Generation run {run.id}: {run.get_state_display().lower()}."
        response.context_data["announce"] = f"{sentence} {detail}".strip()
    return response


@campaign_owner_required
@require_GET
@block_of_section_page
def candidates_recent(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """The campaign page's candidates table, fetched again when a run ends."""
    campaign = request.campaign
    context = {
        "campaign": campaign,
        "candidates": selectors.recent_candidates(campaign),
        "counts": selectors.candidate_counts(campaign),
    }
    return TemplateResponse(request, RECENT_FRAGMENT, context)


@campaign_owner_required
@require_POST
@plain_form_fallback
def run_start(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """Generate for every original, for the `original` ids posted (a retry of some), or
    with `scope=not_generated` for the originals not generated yet."""
    campaign = request.campaign
    posted = request.POST.getlist("original")
    try:
        if not all(is_digits(value) for value in posted):
            raise InvalidInput("Original ids are numbers.", fields={"original": ["Not a number."]})
        scope = request.POST.get("scope", "")
        if scope not in ("", "not_generated"):
            raise InvalidInput(
                "scope is not_generated (the originals not generated yet) or left out (all).",
                fields={"scope": ["Not a scope."]},
            )
        original_ids = [int(value) for value in posted] or None
        runs.generation_run_start(
            campaign=campaign, original_ids=original_ids, not_generated_only=bool(scope)
        )
    except CfannotateError as error:
        return _fragment(request, campaign, error=error.message, status=error.status_code)
    return _announce(_fragment(request, campaign))


def _run_action(request, campaign_id: int, run_id: int, action) -> HttpResponse:
    campaign = request.campaign
    run = get_object_or_404(GenerationRun, pk=run_id, campaign=campaign)
    try:
        action(run=run)
    except CfannotateError as error:
        return _fragment(request, campaign, error=error.message, status=error.status_code)
    return _announce(_fragment(request, campaign))


@campaign_owner_required
@require_POST
@plain_form_fallback
def run_cancel(request: HtmxHttpRequest, campaign_id: int, run_id: int) -> HttpResponse:
    return _run_action(request, campaign_id, run_id, runs.generation_run_cancel)


@campaign_owner_required
@require_POST
@plain_form_fallback
def run_retry(request: HtmxHttpRequest, campaign_id: int, run_id: int) -> HttpResponse:
    return _run_action(request, campaign_id, run_id, runs.generation_run_retry)


def _import_fragment(
    request,
    campaign,
    form: CandidateImportForm,
    *,
    job: CandidateImport | None,
    error: CfannotateError | None = None,
    message: str = "",
) -> HttpResponse:
    # The error's own status: htmx swaps 4xx answers too (responseHandling in base.html).
    status = 200 if error is None else error.status_code
    context = {
        "campaign": campaign,
        "form": form,
        "error": error,
        "candidate_import": job,
        "message": message,  # a plain form's flash message (plain_form_fallback)
    }
    return TemplateResponse(request, IMPORT_FRAGMENT, context, status=status)


@campaign_owner_required
@require_http_methods(["GET", "POST"])
@block_of_section_page
@plain_form_fallback
def candidate_import(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """The upload form, or the progress of the import under way. A posted file's rows are
    checked now (every bad one named in place); a good file is annotated and stored by a
    background task whose progress the block then shows."""
    campaign = request.campaign
    if request.method == "GET":
        job = imports.latest_candidate_import(campaign)
        return _import_fragment(request, campaign, CandidateImportForm(), job=job)
    form = CandidateImportForm(request.POST, request.FILES)
    if not form.is_valid():
        fields = {name: list(problems) for name, problems in form.errors.items()}
        error = InvalidInput("Choose a CSV or JSONL file to upload.", fields=fields)
        return _import_fragment(request, campaign, form, job=None, error=error)
    upload = form.cleaned_data["file"]
    try:
        job = imports.candidate_import_start(
            campaign=campaign,
            user=request.user,
            file_name=upload.name,
            content=uploaded_bytes(upload),
            score_fluency=form.cleaned_data["score_fluency"],
        )
    except CfannotateError as error:
        return _import_fragment(request, campaign, form, job=None, error=error)
    message = (
        f"{job.file_name}: {counted(job.rows_total, 'row')}, all valid; being annotated and "
        "stored in the background."
    )
    return _import_fragment(request, campaign, CandidateImportForm(), job=job, message=message)


@campaign_owner_required
@require_GET
@block_of_section_page
def candidate_import_progress(
    request: HtmxHttpRequest, campaign_id: int, import_id: int
) -> HttpResponse:
    """The block while it polls one import; the poll that finds it done reloads the page,
    which then shows the new candidates and what was imported."""
    campaign = request.campaign
    try:
        job = imports.candidate_import_of(campaign, import_id)
    except NotFound as error:
        raise Http404(error.message) from None
    if job.state == ImportState.DONE:
        messages.success(request, imports.import_message(job))
        return HttpResponseClientRefresh()
    return _import_fragment(request, campaign, CandidateImportForm(), job=job)


@campaign_owner_required
@require_POST
@plain_form_fallback
def candidate_import_cancel(
    request: HtmxHttpRequest, campaign_id: int, import_id: int
) -> HttpResponse:
    """Cancel a queued or running import; nothing of it is stored."""
    campaign = request.campaign
    try:
        job = imports.candidate_import_cancel(campaign=campaign, import_id=import_id)
    except CfannotateError as error:
        latest = imports.latest_candidate_import(campaign)
        return _import_fragment(request, campaign, CandidateImportForm(), job=latest, error=error)
    message = imports.import_message(job)
    return _import_fragment(request, campaign, CandidateImportForm(), job=job, message=message)


# --------------------------------------------------------------------------- review

REVIEW_PAGE = "candidates/review.html"
REVIEW_ROW = "candidates/_review_row.html"
REVIEW_PER_PAGE = 50


def _review_context(request, campaign, *, message: str = "", error=None) -> tuple[dict, int]:
    """The filter form, the page of rows it selects, and the query to keep in links."""
    form = CandidateFilterForm(request.GET, generators=selectors.candidate_generators(campaign))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "campaign": campaign,
        "form": form,
        "query": query.urlencode(),
        "page": None,
        "message": message,
        "error": error,
    }
    if not form.is_valid():
        fields = {name: list(problems) for name, problems in form.errors.items()}
        context["error"] = InvalidInput("Some filters are invalid.", fields=fields)
        return context, 400
    context["classifier_problem"] = predictions.baseline_label_problem(campaign)
    context["classifier_check"] = predictions.baseline_check_note(campaign)
    context["classifier_guessing"] = predictions.baseline_is_weak(campaign)
    filters = form.filters()
    rows = selectors.candidates_paged(campaign, filters)
    page = page_of(rows, REVIEW_PER_PAGE, request.GET.get("page"))
    context["page"] = page
    # Grouped by original (the default order): each group opens with what generation made of it.
    if filters.ordering in (None, "", "original"):
        shown = {candidate.original_id for candidate in page.object_list}
        context["generation"] = {
            status.original.pk: status
            for status in selectors.generation_status(campaign, original_ids=shown)
        }
    return context, 200 if error is None else error.status_code


@campaign_owner_required
@require_GET
def candidate_review(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """The candidates with filters; htmx asks for just the results when a filter changes."""
    campaign = request.campaign
    context, status = _review_context(request, campaign)
    template = REVIEW_PAGE
    if request.htmx and request.htmx.target == "review-results":
        template += "#results"
        context["status_oob"] = True  # the page's status line says what the filter found
    return TemplateResponse(request, template, context, status=status)


@campaign_owner_required
@require_POST
@plain_form_fallback
def candidates_bulk(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """Accept or reject the ticked candidates, all or none; the results come back."""
    campaign = request.campaign
    action = request.POST.get("action")
    ids = [int(value) if is_digits(value) else value for value in request.POST.getlist("ids")]
    message, error = "", None
    try:
        if action not in review.REVIEW_ACTIONS:
            raise InvalidInput("Choose accept or reject.", fields={"action": ["Unknown."]})
        if not ids:
            raise InvalidInput("Tick the candidates to change first.", fields={"ids": ["Empty."]})
        if not all(isinstance(value, int) for value in ids):
            raise InvalidInput("Candidate ids are numbers.", fields={"ids": ["Not a number."]})
        summary = review.candidates_review(campaign=campaign, **{action: ids})
        done = summary.accepted if action == "accept" else summary.rejected
        message = f"{counted(done, 'candidate')} {action}ed."
    except CfannotateError as caught:
        error = caught
    context, status = _review_context(request, campaign, message=message, error=error)
    context["status_oob"] = bool(request.htmx)  # a plain post gets the whole page instead
    return TemplateResponse(request, f"{REVIEW_PAGE}#results", context, status=status)


@campaign_owner_required
@require_POST
def predictions_upload(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """The researcher's own predicted labels for candidates (the classifier in the loop's
    "uploaded" source): all rows or none. Stored: back to the review page with how many.
    Refused: every bad row in the review page's predictions block (just the block for htmx)."""
    campaign = request.campaign
    form = CandidatePredictionsForm(request.POST, request.FILES)
    try:
        if not form.is_valid():
            fields = {name: list(problems) for name, problems in form.errors.items()}
            raise InvalidInput("Choose a CSV or JSONL file of predictions.", fields=fields)
        upload = form.cleaned_data["file"]
        updated = predictions.candidate_predictions_upload(
            campaign=campaign, file_name=upload.name, content=uploaded_bytes(upload)
        )
    except CfannotateError as error:
        if request.htmx:
            context = {"campaign": campaign, "predictions_error": error}
            return TemplateResponse(
                request, f"{REVIEW_PAGE}#predictions", context, status=error.status_code
            )
        context, _ = _review_context(request, campaign)
        context["predictions_error"] = error
        return TemplateResponse(request, REVIEW_PAGE, context, status=error.status_code)
    messages.success(
        request, f"Stored your predicted label for {updated} candidate{pluralize(updated)}."
    )
    if request.htmx:
        return HttpResponseClientRefresh()
    return redirect("candidate-review", campaign_id=campaign.id)


def _row(
    request, campaign, candidate_id: int, *, editing=False, error=None, text=None, done: str = ""
):
    """One row as a button answers it; `done` ("accepted") is what the action did."""
    row = (
        selectors.candidates_filtered(campaign, selectors.CandidateFilters())
        .filter(pk=candidate_id)
        .first()
    )
    if row is None:
        raise Http404("No such candidate in this campaign.")
    context = {
        "campaign": campaign,
        "candidate": row,
        "editing": editing,
        "row_error": error,
        "classifier_guessing": predictions.baseline_is_weak(campaign),
        "focus": True,  # the new row takes the focus (htmx focuses its [autofocus] control)
    }
    if done:
        said = f"Candidate {row.pk} {done}."
        context["message"] = said  # a plain post's flash message (plain_form_fallback)
        context["announce"] = said if request.htmx else ""  # the page's status line
    context["text"] = row.text if text is None else text
    status = 200 if error is None else error.status_code
    return TemplateResponse(request, REVIEW_ROW, context, status=status)


def _candidate(campaign, candidate_id: int):
    try:
        return review.candidate_get(campaign=campaign, candidate_id=candidate_id)
    except NotFound as error:
        raise Http404(error.message) from None


@campaign_owner_required
@require_GET
def candidate_row(request: HtmxHttpRequest, campaign_id: int, candidate_id: int) -> HttpResponse:
    """One row of the review table (to leave the edit form)."""
    campaign = request.campaign
    return _row(request, campaign, _candidate(campaign, candidate_id).pk)


def _row_action(request, campaign_id: int, candidate_id: int, action, done: str) -> HttpResponse:
    campaign = request.campaign
    candidate = _candidate(campaign, candidate_id)
    try:
        action(candidate=candidate)
    except CfannotateError as error:
        return _row(request, campaign, candidate.pk, error=error)
    return _row(request, campaign, candidate.pk, done=done)


@campaign_owner_required
@require_POST
@plain_form_fallback
def candidate_accept(request: HtmxHttpRequest, campaign_id: int, candidate_id: int):
    return _row_action(request, campaign_id, candidate_id, review.candidate_accept, "accepted")


@campaign_owner_required
@require_POST
@plain_form_fallback
def candidate_reject(request: HtmxHttpRequest, campaign_id: int, candidate_id: int):
    return _row_action(request, campaign_id, candidate_id, review.candidate_reject, "rejected")


@campaign_owner_required
@require_http_methods(["GET", "POST"])
@plain_form_fallback
def candidate_edit(request: HtmxHttpRequest, campaign_id: int, candidate_id: int):
    """GET: the row as a form; POST: save the new text (re-annotated) or show why not."""
    campaign = request.campaign
    candidate = _candidate(campaign, candidate_id)
    if request.method == "GET":
        return _row(request, campaign, candidate.pk, editing=True)
    text = request.POST.get("text", "")
    try:
        review.candidate_edit(candidate=candidate, text=text)
    except CfannotateError as error:
        return _row(request, campaign, candidate.pk, editing=True, error=error, text=text)
    return _row(request, campaign, candidate.pk, done="saved")
