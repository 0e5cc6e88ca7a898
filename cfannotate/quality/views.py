"""The campaign's quality page: verdicts, agreement, plots, and worker decisions (htmx)."""

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET, require_POST

from cfannotate.campaigns.access import campaign_owner_required
from cfannotate.campaigns.plain_forms import block_of_section_page, plain_form_fallback
from cfannotate.core.exceptions import CfannotateError, InvalidInput
from cfannotate.core.form_numbers import StrictDecimalField
from cfannotate.core.htmx import HtmxHttpRequest
from cfannotate.core.pagination import page_of
from cfannotate.core.text import counted
from cfannotate.quality import plots
from cfannotate.quality.decisions import (
    decision_update,
    decisions_apply,
    decisions_confirm_proposed,
)
from cfannotate.quality.forms import DecisionListForm, WorkerListForm
from cfannotate.quality.models import DecisionAction, DecisionState, WorkerDecision
from cfannotate.quality.selectors import (
    decision_state_counts,
    decisions_for,
    quality_report,
    worker_rows,
    workers_listed,
)
from cfannotate.quality.services import quality_refresh

LABEL_CHART_WORKERS = 12  # the workers whose label distributions differ most
WORKERS_PER_PAGE = 50
DECISIONS_PER_PAGE = 50
PAGE = "quality/page.html"
REPORT = "quality/_report.html"
WORKERS = "quality/_workers.html"
DECISIONS = "quality/_decisions.html"
# The report's swaps tell the worker table to follow (it is a block of its own, paged).
REPORT_EVENTS = "workers-changed"


def report_context(campaign) -> dict:
    report = quality_report(campaign)
    labels = [value for value, _ in report.campaign_label_shares]
    spread = sorted(
        (row for row in report.workers if row.quality.distribution_distance is not None),
        key=lambda row: -row.quality.distribution_distance,
    )[:LABEL_CHART_WORKERS]
    standings = [
        plots.WorkerStanding(
            name=row.quality.worker.external_id,
            median_seconds=row.quality.median_seconds,
            gold_correct=row.quality.gold_correct,
            gold_total=row.quality.gold_total,
            qualified=row.quality.qualified,
            on_hold=row.quality.held_until is not None,
        )
        for row in report.workers
    ]
    return {
        "campaign": campaign,
        "report": report,
        "charts": [
            plots.worker_chart(
                standings,
                min_seconds=campaign.min_median_seconds,
                min_gold_share=campaign.min_gold_share,
            ),
            plots.round_time_chart(report.round_seconds, threshold=campaign.min_median_seconds),
            plots.gold_chart(standings),
            plots.label_chart(
                [("all workers", report.campaign_label_shares)]
                + [(row.quality.worker.external_id, row.label_shares) for row in spread],
                labels=labels,
            ),
            plots.position_chart(report.position_label_counts, labels=labels),
            plots.agreement_chart(report.agreements),
        ],
    }


def _list_state(request, form_class) -> tuple[str, str, list[tuple[str, str]]]:
    """For one list: the address without its page (for its page links, which keep the other
    list where it was), its own filters and page (what its block shows, to ask for again),
    and the address's other parameters (for hidden fields of its filter form)."""
    own = f"{form_class.prefix}-"
    links = request.GET.copy()
    links.pop(f"{own}page", None)
    shown = request.GET.copy()
    for name in list(shown):
        if not name.startswith(own):
            del shown[name]
    others = [(name, value) for name, value in request.GET.items() if not name.startswith(own)]
    return links.urlencode(), shown.urlencode(), others


def _list_page(request, form, rows, per_page: int):
    """The page of `rows` the form's list shows, and its refused filters (None if none)."""
    if not form.is_valid():
        fields = {name: list(problems) for name, problems in form.errors.items()}
        return None, InvalidInput("Some filters are invalid.", fields=fields)
    return page_of(rows(**form.filters()), per_page, request.GET.get(f"{form.prefix}-page")), None


def _workers_context(request, campaign) -> dict:
    """The worker table's page, its filters, and what the page's status line says of it."""
    form = WorkerListForm(request.GET)
    page, error = _list_page(
        request,
        form,
        lambda **filters: workers_listed(campaign, **filters),
        WORKERS_PER_PAGE,
    )
    if page is not None:
        page.object_list = worker_rows(campaign, page.object_list)
    query, shown, others = _list_state(request, WorkerListForm)
    return {
        "workers_form": form,
        "workers_page": page,
        "workers_error": error,
        "workers_query": query,
        "workers_shown": shown,
        "workers_others": others,
    }


def _decisions_context(request, campaign, **extra) -> dict:
    """The decisions' page, its filters, and the campaign-wide counts by state (what the
    "confirm all" and "send" buttons act on)."""
    form = DecisionListForm(request.GET)
    page, error = _list_page(
        request,
        form,
        lambda **filters: decisions_for(campaign, **filters),
        DECISIONS_PER_PAGE,
    )
    query, shown, others = _list_state(request, DecisionListForm)
    counts = decision_state_counts(campaign)
    return {
        "campaign": campaign,
        "decisions_form": form,
        "decisions_page": page,
        "decisions_error": error,
        "decisions_query": query,
        "decisions_shown": shown,
        "decisions_others": others,
        "decision_counts": [
            (state, name, counts[state]) for state, name in DecisionState.choices if counts[state]
        ],
        "decisions_total": sum(counts.values()),
        "proposed_count": counts[DecisionState.PROPOSED],
        "confirmed_total": counts[DecisionState.CONFIRMED],
        "actions": DecisionAction.choices,
        # A post, a filter or a page link says what it did; the block's own reload (after a
        # run of quality control, which says so in the report's line) says nothing.
        "status_oob": bool(request.htmx) and request.htmx.trigger != "decisions",
        **extra,
    }


def _status(*errors) -> int:
    """400 where a list's filters were refused (the page still shows, with why)."""
    return next((error.status_code for error in errors if error is not None), 200)


@campaign_owner_required
@require_GET
def quality_page(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """The report, the worker table and the decisions; htmx asks for just one list when
    its filters or page change (its block is the request's target)."""
    campaign = request.campaign
    target = request.htmx.target if request.htmx else None
    if target == "quality-workers":
        context = {"campaign": campaign, **_workers_context(request, campaign)}
        # A filter or a page link says what it found; the report's refresh says nothing.
        context["status_oob"] = request.htmx.trigger != "quality-workers"
        return TemplateResponse(request, WORKERS, context, status=_status(context["workers_error"]))
    if target == "decisions":
        context = _decisions_context(request, campaign)
        return TemplateResponse(
            request, DECISIONS, context, status=_status(context["decisions_error"])
        )
    context = {
        **report_context(campaign),
        **_workers_context(request, campaign),
        **_decisions_context(request, campaign),
    }
    status = _status(context["workers_error"], context["decisions_error"])
    return TemplateResponse(request, PAGE, context, status=status)


@campaign_owner_required
@require_GET
@block_of_section_page
def quality_report_fragment(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    campaign = request.campaign
    response = TemplateResponse(request, REPORT, report_context(campaign))
    response["HX-Trigger"] = REPORT_EVENTS
    return response


@campaign_owner_required
@require_POST
@plain_form_fallback
def quality_refresh_view(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    campaign = request.campaign
    summary = quality_refresh(campaign=campaign)
    message = (
        f"Quality control ran: {summary.qualified} of {summary.workers} workers qualified, "
        f"{summary.kept} of {summary.candidates} counterfactuals kept, "
        f"{counted(summary.requeued_units, 'unit')} re-queued, "
        f"{counted(summary.decisions_proposed, 'decision')} proposed or updated."
    )
    context = {**report_context(campaign), "message": message}
    response = TemplateResponse(request, REPORT, context)
    response["HX-Trigger"] = f"decisions-changed, {REPORT_EVENTS}"
    return response


@campaign_owner_required
@require_GET
@block_of_section_page
def decisions_fragment(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """The decisions block: the page of it that its query names."""
    context = _decisions_context(request, request.campaign)
    return TemplateResponse(request, DECISIONS, context, status=_status(context["decisions_error"]))


# A bonus as the decision's field stores it: at most 999999.99 USD, in whole cents, in
# plain digits (Decimal alone reads "1_0" as 10 and "NaN" as a number).
AMOUNT_FIELD = StrictDecimalField(
    max_digits=8, decimal_places=2, min_value=Decimal("0.01"), required=False
)


def _amount(value: str | None) -> Decimal | None:
    try:
        return AMOUNT_FIELD.clean(value)
    except ValidationError as error:
        raise InvalidInput(
            "The decision was not changed.", fields={"amount": error.messages}
        ) from None


def _typed(request: HtmxHttpRequest, decision: WorkerDecision) -> dict:
    """A refused row's fields as the researcher typed them (stored values where not sent)."""
    return {
        "action": request.POST.get("action") or decision.action,
        "amount": request.POST.get("amount", decision.amount),
        "reason": request.POST.get("reason", decision.reason),
    }


@campaign_owner_required
@require_POST
@plain_form_fallback
def decision_update_view(
    request: HtmxHttpRequest, campaign_id: int, decision_id: int
) -> HttpResponse:
    campaign = request.campaign
    decision = WorkerDecision.objects.filter(campaign=campaign, id=decision_id).first()
    if decision is None:
        raise Http404("No such decision in this campaign.")
    try:
        decision_update(
            decision=decision,
            user=request.user,
            state=request.POST.get("state", DecisionState.CONFIRMED),
            action=request.POST.get("action") or None,
            amount=_amount(request.POST.get("amount")),
            reason=request.POST.get("reason"),
        )
    except CfannotateError as error:
        errors = [error.message] + [
            f"{name}: {' '.join(messages)}" for name, messages in error.fields.items()
        ]
        context = _decisions_context(
            request, campaign, errors=errors, failed_id=decision_id, typed=_typed(request, decision)
        )
        return TemplateResponse(request, DECISIONS, context, status=error.status_code)
    context = _decisions_context(
        request, campaign, message=f"{decision.worker.external_id}: {decision.get_state_display()}."
    )
    return TemplateResponse(request, DECISIONS, context)


@campaign_owner_required
@require_POST
@plain_form_fallback
def decisions_confirm_view(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    campaign = request.campaign
    count = decisions_confirm_proposed(campaign=campaign, user=request.user)
    context = _decisions_context(
        request, campaign, message=f"{counted(count, 'proposal')} confirmed."
    )
    return TemplateResponse(request, DECISIONS, context)


@campaign_owner_required
@require_POST
@plain_form_fallback
def decisions_apply_view(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """Sends only when the post says `confirmed=yes`: the button's htmx request does after
    its confirm dialog; a plain post (htmx not loaded yet) is asked first, in the page."""
    campaign = request.campaign
    if request.POST.get("confirmed") != "yes":
        waiting = decisions_for(campaign, state=DecisionState.CONFIRMED).count()
        context = _decisions_context(
            request, campaign, asks_to_confirm=True, confirmed_count=waiting
        )
        return TemplateResponse(request, DECISIONS, context)
    applied, failed = decisions_apply(campaign=campaign)
    message = f"{counted(applied, 'decision')} sent to the platforms"
    message += f", {failed} refused (see the errors below)." if failed else "."
    context = _decisions_context(request, campaign, message=message)
    return TemplateResponse(request, DECISIONS, context)
