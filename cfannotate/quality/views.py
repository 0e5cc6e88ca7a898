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
from cfannotate.core.text import counted
from cfannotate.quality import plots
from cfannotate.quality.decisions import (
    decision_update,
    decisions_apply,
    decisions_confirm_proposed,
)
from cfannotate.quality.models import DecisionAction, DecisionState, WorkerDecision
from cfannotate.quality.selectors import decisions_for, quality_report
from cfannotate.quality.services import quality_refresh

LABEL_CHART_WORKERS = 12  # the workers whose label distributions differ most


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


def _decisions_context(campaign, **extra) -> dict:
    return {
        "campaign": campaign,
        "decisions": decisions_for(campaign),
        "actions": DecisionAction.choices,
        **extra,
    }


@campaign_owner_required
@require_GET
def quality_page(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    campaign = request.campaign
    context = {**report_context(campaign), **_decisions_context(campaign)}
    return TemplateResponse(request, "quality/page.html", context)


@campaign_owner_required
@require_GET
@block_of_section_page
def quality_report_fragment(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    campaign = request.campaign
    return TemplateResponse(request, "quality/_report.html", report_context(campaign))


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
    response = TemplateResponse(request, "quality/_report.html", context)
    response["HX-Trigger"] = "decisions-changed"
    return response


@campaign_owner_required
@require_GET
@block_of_section_page
def decisions_fragment(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    campaign = request.campaign
    return TemplateResponse(request, "quality/_decisions.html", _decisions_context(campaign))


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
            campaign, errors=errors, failed_id=decision_id, typed=_typed(request, decision)
        )
        return TemplateResponse(
            request, "quality/_decisions.html", context, status=error.status_code
        )
    return TemplateResponse(request, "quality/_decisions.html", _decisions_context(campaign))


@campaign_owner_required
@require_POST
@plain_form_fallback
def decisions_confirm_view(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    campaign = request.campaign
    count = decisions_confirm_proposed(campaign=campaign, user=request.user)
    context = _decisions_context(campaign, message=f"{counted(count, 'proposal')} confirmed.")
    return TemplateResponse(request, "quality/_decisions.html", context)


@campaign_owner_required
@require_POST
@plain_form_fallback
def decisions_apply_view(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """Sends only when the post says `confirmed=yes`: the button's htmx request does after
    its confirm dialog; a plain post (htmx not loaded yet) is asked first, in the page."""
    campaign = request.campaign
    if request.POST.get("confirmed") != "yes":
        waiting = decisions_for(campaign, state=DecisionState.CONFIRMED).count()
        context = _decisions_context(campaign, asks_to_confirm=True, confirmed_count=waiting)
        return TemplateResponse(request, "quality/_decisions.html", context)
    applied, failed = decisions_apply(campaign=campaign)
    message = f"{counted(applied, 'decision')} sent to the platforms"
    message += f", {failed} refused (see the errors below)." if failed else "."
    context = _decisions_context(campaign, message=message)
    return TemplateResponse(request, "quality/_decisions.html", context)
