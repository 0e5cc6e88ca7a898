"""The candidates blocks of the campaign page and the review page (htmx).

Generation runs: start, live progress (polling), cancel, retry. Imports: the upload form
for the researcher's own candidates. Review: filter, accept, reject, edit (row by row or
ticked in bulk), and promote an original's candidates to a gold round.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect, HttpResponseClientRefresh

from cfannotate.campaigns.selectors import campaign_get_for_owner
from cfannotate.candidates import review, runs, selectors, services
from cfannotate.candidates.forms import CandidateFilterForm, CandidateImportForm
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
        "generation": selectors.generation_overview(campaign),
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
    """Generate for every original, or for the `original` ids posted (a retry of some)."""
    campaign = _campaign(request, campaign_id)
    posted = request.POST.getlist("original")
    try:
        if not all(value.isdigit() for value in posted):
            raise InvalidInput("Original ids are numbers.", fields={"original": ["Not a number."]})
        original_ids = [int(value) for value in posted] or None
        runs.generation_run_start(campaign=campaign, original_ids=original_ids)
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
        f"Imported {summary.imported} candidates for {summary.originals} originals. "
        + summary.message,
    )
    if request.htmx:
        return HttpResponseClientRefresh()
    return redirect("campaign-detail", campaign_id=campaign.id)


# --------------------------------------------------------------------------- review

REVIEW_PAGE = "candidates/review.html"
REVIEW_ROW = "candidates/_review_row.html"
PROMOTE_PAGE = "candidates/promote.html"
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
    filters = form.filters()
    rows = selectors.candidates_filtered(campaign, filters)
    page = Paginator(rows, REVIEW_PER_PAGE).get_page(request.GET.get("page"))
    context["page"] = page
    # Grouped by original (the default order): each group opens with what generation made of it.
    if filters.ordering in (None, "", "original"):
        shown = {candidate.original_id for candidate in page.object_list}
        context["generation"] = {
            status.original.pk: status
            for status in selectors.generation_status(campaign, original_ids=shown)
        }
    return context, 200 if error is None else error.status_code


@login_required
@require_GET
def candidate_review(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """The candidates with filters; htmx asks for just the results when a filter changes."""
    campaign = _campaign(request, campaign_id)
    context, status = _review_context(request, campaign)
    template = REVIEW_PAGE
    if request.htmx and request.htmx.target == "review-results":
        template += "#results"
    return TemplateResponse(request, template, context, status=status)


@login_required
@require_POST
def candidates_bulk(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """Accept or reject the ticked candidates, all or none; the results come back."""
    campaign = _campaign(request, campaign_id)
    action = request.POST.get("action")
    ids = [int(value) if value.isdigit() else value for value in request.POST.getlist("ids")]
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
        message = f"{done} candidate(s) {action}ed."
    except CfannotateError as caught:
        error = caught
    context, status = _review_context(request, campaign, message=message, error=error)
    return TemplateResponse(request, f"{REVIEW_PAGE}#results", context, status=status)


def _row(request, campaign, candidate_id: int, *, editing=False, error=None, text=None):
    row = (
        selectors.candidates_filtered(campaign, selectors.CandidateFilters())
        .filter(pk=candidate_id)
        .first()
    )
    if row is None:
        raise Http404("No such candidate in this campaign.")
    context = {"campaign": campaign, "candidate": row, "editing": editing, "row_error": error}
    context["text"] = row.text if text is None else text
    status = 200 if error is None else error.status_code
    return TemplateResponse(request, REVIEW_ROW, context, status=status)


def _candidate(campaign, candidate_id: int):
    try:
        return review.candidate_get(campaign=campaign, candidate_id=candidate_id)
    except NotFound as error:
        raise Http404(error.message) from None


@login_required
@require_GET
def candidate_row(request: HtmxHttpRequest, campaign_id: int, candidate_id: int) -> HttpResponse:
    """One row of the review table (to leave the edit form)."""
    campaign = _campaign(request, campaign_id)
    return _row(request, campaign, _candidate(campaign, candidate_id).pk)


def _row_action(request, campaign_id: int, candidate_id: int, action) -> HttpResponse:
    campaign = _campaign(request, campaign_id)
    candidate = _candidate(campaign, candidate_id)
    try:
        action(candidate=candidate)
    except CfannotateError as error:
        return _row(request, campaign, candidate.pk, error=error)
    return _row(request, campaign, candidate.pk)


@login_required
@require_POST
def candidate_accept(request: HtmxHttpRequest, campaign_id: int, candidate_id: int):
    return _row_action(request, campaign_id, candidate_id, review.candidate_accept)


@login_required
@require_POST
def candidate_reject(request: HtmxHttpRequest, campaign_id: int, candidate_id: int):
    return _row_action(request, campaign_id, candidate_id, review.candidate_reject)


@login_required
@require_http_methods(["GET", "POST"])
def candidate_edit(request: HtmxHttpRequest, campaign_id: int, candidate_id: int):
    """GET: the row as a form; POST: save the new text (re-annotated) or show why not."""
    campaign = _campaign(request, campaign_id)
    candidate = _candidate(campaign, candidate_id)
    if request.method == "GET":
        return _row(request, campaign, candidate.pk, editing=True)
    text = request.POST.get("text", "")
    try:
        review.candidate_edit(candidate=candidate, text=text)
    except CfannotateError as error:
        return _row(request, campaign, candidate.pk, editing=True, error=error, text=text)
    return _row(request, campaign, candidate.pk)


def _promoted_items(post) -> list[dict]:
    """The ticked candidates of the promote form, with the answers typed beside each."""
    items = []
    for raw in post.getlist("candidate"):
        items.append(
            {
                "candidate_id": int(raw) if raw.isdigit() else raw,
                "valid": post.get(f"valid-{raw}", ""),
                "label": post.get(f"label-{raw}", ""),
                "explanation": post.get(f"explanation-{raw}", ""),
            }
        )
    return items


@login_required
@require_http_methods(["GET", "POST"])
def candidates_promote(request: HtmxHttpRequest, campaign_id: int, original_id: int):
    """Make a gold (or training) round of some of one original's candidates."""
    from cfannotate.labeling.models import GoldKind

    campaign = _campaign(request, campaign_id)
    original = campaign.originals.select_related("label").filter(pk=original_id).first()
    if original is None:
        raise Http404("No such original in this campaign.")
    error = None
    if request.method == "POST":
        kind = request.POST.get("kind", GoldKind.GOLD)
        try:
            review.candidates_promote_to_gold(
                campaign=campaign,
                original=original,
                kind=kind,
                items=_promoted_items(request.POST),
            )
        except CfannotateError as caught:
            error = caught
        else:
            made = "training" if kind == GoldKind.TRAINING else "gold"
            messages.success(
                request, f"A {made} round was made from original {original.external_id}."
            )
            target = reverse("gold-page", args=[campaign.id])
            return HttpResponseClientRedirect(target) if request.htmx else redirect(target)
    post = request.POST
    ticked = set(post.getlist("candidate"))
    rows = [
        {
            "candidate": candidate,
            "ticked": str(candidate.pk) in ticked,
            "valid": post.get(f"valid-{candidate.pk}", "true"),
            # What the generator aimed for is the likeliest answer; else the original's label.
            "label": post.get(f"label-{candidate.pk}")
            or (candidate.intended_label or original.label).value,
            "explanation": post.get(f"explanation-{candidate.pk}", ""),
        }
        for candidate in selectors.candidates_filtered(
            campaign, selectors.CandidateFilters(original=original.pk)
        )
    ]
    context = {
        "campaign": campaign,
        "original": original,
        "rows": rows,
        "labels": campaign.labels.all(),
        "kinds": GoldKind.choices,
        "kind": post.get("kind", GoldKind.GOLD),
        "error": error,
    }
    status = 200 if error is None else error.status_code
    template = PROMOTE_PAGE + ("#promote-form" if request.htmx else "")
    return TemplateResponse(request, template, context, status=status)
