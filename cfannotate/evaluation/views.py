"""The campaign page's evaluation section (htmx): run buttons, the last tables and charts."""

from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET, require_POST

from cfannotate.campaigns.access import campaign_owner_required
from cfannotate.campaigns.models import Campaign
from cfannotate.campaigns.plain_forms import plain_form_fallback
from cfannotate.core.exceptions import CfannotateError
from cfannotate.core.htmx import HtmxHttpRequest
from cfannotate.evaluation import plots
from cfannotate.evaluation.forms import EvaluationRunForm
from cfannotate.evaluation.models import EvaluationKind
from cfannotate.evaluation.selectors import evaluations_for, latest_evaluations
from cfannotate.evaluation.services import DEFAULT_SEEDS, DEFAULT_TEST_FRACTION, evaluation_run
from cfannotate.evaluation.uploads import jsonl_rows

HISTORY_ROWS = 10


def evaluation_context(campaign: Campaign, **extra) -> dict:
    latest = latest_evaluations(campaign)
    table2, table3 = latest[EvaluationKind.TABLE2], latest[EvaluationKind.TABLE3]
    charts = []
    if table2 is not None:
        charts.append(plots.contrast_chart(table2.result))
    if table3 is not None:
        charts.append(plots.augmentation_chart(table3.result))
    return {
        "campaign": campaign,
        "table2": table2,
        "table3": table3,
        "charts": charts,
        "history": list(evaluations_for(campaign)[:HISTORY_ROWS]),
        **extra,
    }


def table3_inputs(posted=None) -> dict[str, str]:
    """What the Table 3 form's inputs show: the defaults, or what was posted for Table 3, so
    a refused run keeps what the researcher typed."""
    inputs = {
        "n": "",
        "m": "",
        "test_fraction": str(DEFAULT_TEST_FRACTION),
        "seeds": ",".join(str(seed) for seed in DEFAULT_SEEDS),
    }
    if posted is not None and posted.get("kind") == EvaluationKind.TABLE3:
        inputs.update({name: posted.get(name, "") for name in inputs})
    return inputs


def _fragment(request, campaign: Campaign, *, status: int = 200, **extra) -> TemplateResponse:
    posted = request.POST if request.method == "POST" else None
    context = evaluation_context(campaign, table3_inputs=table3_inputs(posted), **extra)
    return TemplateResponse(request, "evaluation/_evaluation.html", context, status=status)


@campaign_owner_required
@require_GET
@plain_form_fallback
def evaluation_fragment(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    return _fragment(request, request.campaign)


@campaign_owner_required
@require_POST
@plain_form_fallback
def evaluation_run_view(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    campaign = request.campaign
    form = EvaluationRunForm(request.POST, request.FILES)
    if not form.is_valid():
        errors = [
            f"{name}: {' '.join(messages)}" if name != "__all__" else " ".join(messages)
            for name, messages in form.errors.items()
        ]
        return _fragment(request, campaign, status=400, error="Check the form.", errors=errors)
    data = form.cleaned_data
    try:
        options = {}
        if data["kind"] == EvaluationKind.TABLE2:
            if data["predictions"]:
                options["predictions"] = jsonl_rows(data["predictions"], field="predictions")
            if data["training"]:
                options["training_records"] = jsonl_rows(data["training"], field="training_records")
        else:
            options.update(
                n=data["n"],
                m=data["m"],
                test_fraction=data["test_fraction"],
                seeds=data["seeds"],
            )
        evaluation = evaluation_run(
            campaign=campaign, kind=data["kind"], user=request.user, **options
        )
    except CfannotateError as error:
        errors = [f"{name}: {' '.join(messages)}" for name, messages in error.fields.items()]
        return _fragment(
            request, campaign, status=error.status_code, error=error.message, errors=errors
        )
    source = evaluation.get_source_display().lower()
    message = f"{evaluation.get_kind_display()} computed with the {source}."
    return _fragment(request, campaign, message=message)
