"""The exports page's download links: a file streamed to the campaign's owner."""

from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET

from cfannotate.campaigns.access import campaign_owner_required
from cfannotate.campaigns.models import Campaign
from cfannotate.core.exceptions import InvalidInput
from cfannotate.exports.files import export_prepare, export_response
from cfannotate.exports.selectors import export_sizes

TRUE_VALUES = {"1", "true", "yes", "on"}
FALSE_VALUES = {"", "0", "false", "no", "off"}


def exports_page_context(request: HttpRequest, campaign: Campaign) -> dict:
    """The exports page's part (`campaigns.page_parts`): what each file holds now."""
    return {"sizes": export_sizes(campaign)}


def flag_value(name: str, text: str | None) -> bool:
    """A yes/no query parameter; anything else is an error rather than a silent no."""
    value = (text or "").strip().lower()
    if value in TRUE_VALUES | FALSE_VALUES:
        return value in TRUE_VALUES
    raise InvalidInput(
        f"{name} must be true or false, not {text!r}.", fields={name: ["Must be true or false."]}
    )


@require_GET
@campaign_owner_required
def export_download(request: HttpRequest, campaign_id: int, kind: str) -> HttpResponse:
    campaign = request.campaign
    try:
        export = export_prepare(
            campaign=campaign,
            kind=kind,
            format=request.GET.get("format"),
            include_gold=flag_value("include_gold", request.GET.get("include_gold")),
        )
    except InvalidInput as error:
        context = {"campaign": campaign, "error": error}
        return TemplateResponse(request, "exports/error.html", context, status=error.status_code)
    return export_response(export)
