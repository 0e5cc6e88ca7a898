"""The campaign page's dataset upload (htmx): choose a file, map and preview it, import it.

The file waits on the server between the steps (`cfannotate.core.pending_uploads`);
the page carries only its signed token and the chosen mapping. The session keeps the
same two, so a previewed file is still there, under its mapping, when the researcher
reloads the page or comes back to it, until it is imported, cancelled or expires. What
the preview showed is kept beside the file (`uploads.upload_summary_note`), so showing
it again does not read and check the whole file.
"""

from contextlib import suppress

from django.conf import settings
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRefresh

from cfannotate.campaigns.access import campaign_owner_required
from cfannotate.campaigns.models import Campaign
from cfannotate.campaigns.plain_forms import block_of_section_page, plain_form_fallback
from cfannotate.campaigns.uploads import (
    UploadPreview,
    UploadSummary,
    field_names,
    originals_upload,
    upload_preview,
    upload_summary_from_note,
    upload_summary_note,
)
from cfannotate.core import tabular
from cfannotate.core.exceptions import CfannotateError, InvalidInput
from cfannotate.core.htmx import HtmxHttpRequest
from cfannotate.core.pending_uploads import (
    PendingUpload,
    pending_upload_delete,
    pending_upload_get,
    pending_upload_note,
    pending_upload_note_save,
    pending_upload_save,
)
from cfannotate.core.text import sentence
from cfannotate.core.upload_handlers import limit_uploads, one_upload

FRAGMENT = "campaigns/_upload.html"


def upload_scope(campaign: Campaign) -> str:
    return f"campaign:{campaign.pk}:originals"


def _context(
    campaign: Campaign,
    *,
    preview: UploadPreview | UploadSummary | None = None,
    token: str = "",
    error: CfannotateError | None = None,
) -> dict:
    context = {
        "campaign": campaign,
        "upload_preview": preview,
        "upload_token": token,
        "upload_error": error,
    }
    if preview is not None:
        names = field_names(campaign)
        columns = {column: name for name, column in preview.mapping.items() if column}
        context["upload_fields"] = [
            (name, title, preview.mapping.get(name) or "", preview.problems.get(name, ""))
            for name, title in names.items()
        ]
        context["upload_columns"] = [
            (column, names[columns[column]] if column in columns else "")
            for column in preview.table.columns
        ]
    return context


def _fragment(
    request,
    campaign: Campaign,
    *,
    preview: UploadPreview | None = None,
    token: str = "",
    error: CfannotateError | None = None,
) -> HttpResponse:
    context = _context(campaign, preview=preview, token=token, error=error)
    # htmx swaps 4xx fragments (base.html), so the error's own status is fine for both.
    status = error.status_code if error is not None else 200
    return TemplateResponse(request, FRAGMENT, context, status=status)


def _session_key(campaign: Campaign) -> str:
    return f"pending-upload:{upload_scope(campaign)}"


def _remember(request, campaign: Campaign, pending: PendingUpload, preview: UploadPreview) -> None:
    """Keep the file's token and mapping in the session, and what the preview showed beside
    the file, for the page to show again when it is loaded (`waiting_upload_context`)."""
    request.session[_session_key(campaign)] = {"token": pending.token, "mapping": preview.mapping}
    pending_upload_note_save(pending, upload_summary_note(campaign, preview))


def _forget(request, campaign: Campaign) -> None:
    request.session.pop(_session_key(campaign), None)


def waiting_upload_context(request, campaign: Campaign) -> dict:
    """The upload part's context: the file this researcher previewed and left waiting, if any.

    A file that is gone (expired, imported elsewhere, replaced) shows the empty form.
    """
    remembered = request.session.get(_session_key(campaign))
    if not isinstance(remembered, dict):
        return {"campaign": campaign}
    mapping = remembered.get("mapping")
    mapping = mapping if isinstance(mapping, dict) else None
    try:
        pending = pending_upload_get(
            token=str(remembered.get("token", "")),
            user=request.user,
            scope=upload_scope(campaign),
        )
        # What the preview showed, kept beside the file: the file is read and checked
        # again only when the summary no longer holds (another mapping, the campaign's
        # originals or labels changed since), and the new summary is kept for next time.
        preview = upload_summary_from_note(campaign, pending_upload_note(pending), mapping)
        if preview is None:
            preview = upload_preview(
                campaign=campaign,
                file_name=pending.file_name,
                content=pending.content(),
                mapping=mapping,
            )
            pending_upload_note_save(pending, upload_summary_note(campaign, preview))
    except CfannotateError:
        _forget(request, campaign)
        return {"campaign": campaign}
    return _context(campaign, preview=preview, token=pending.token)


def _posted_mapping(request, campaign: Campaign) -> dict[str, str | None]:
    return {
        name: request.POST.get(f"map-{name}") or None
        for name in field_names(campaign)
        if f"map-{name}" in request.POST
    }


def _pending(request, campaign: Campaign) -> PendingUpload:
    return pending_upload_get(
        token=request.POST.get("token", ""), user=request.user, scope=upload_scope(campaign)
    )


@campaign_owner_required
@require_http_methods(["GET", "POST"])
@limit_uploads
@block_of_section_page
@plain_form_fallback
def original_upload(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """The upload form; a posted file comes back as its preview with guessed columns."""
    campaign = request.campaign
    if request.method == "GET":
        return TemplateResponse(request, FRAGMENT, waiting_upload_context(request, campaign))
    try:
        upload = one_upload(request.FILES)
        if upload is None:
            raise InvalidInput(
                "Choose a CSV, TSV or JSONL file to upload.", fields={"file": ["No file chosen."]}
            )
        content = tabular.upload_bytes(upload, max_bytes=settings.UPLOAD_MAX_BYTES)
        preview = upload_preview(campaign=campaign, file_name=upload.name, content=content)
        # Over the researcher's quota of kept files: Conflict, and nothing is kept.
        pending = pending_upload_save(
            content=content, file_name=upload.name, user=request.user, scope=upload_scope(campaign)
        )
    except CfannotateError as error:
        return _fragment(request, campaign, error=error)
    _remember(request, campaign, pending, preview)
    return _fragment(request, campaign, preview=preview, token=pending.token)


def _kept_preview(request, campaign):
    """The kept file of this upload, previewed under the mapping the form posted."""
    pending = _pending(request, campaign)
    preview = upload_preview(
        campaign=campaign,
        file_name=pending.file_name,
        content=pending.content(),
        mapping=_posted_mapping(request, campaign),
    )
    return pending, preview


@campaign_owner_required
@require_POST
@plain_form_fallback
def original_upload_preview(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """The kept file again, under the mapping just chosen."""
    campaign = request.campaign
    try:
        pending, preview = _kept_preview(request, campaign)
    except CfannotateError as error:
        return _fragment(request, campaign, error=error)
    _remember(request, campaign, pending, preview)
    return _fragment(request, campaign, preview=preview, token=pending.token)


@campaign_owner_required
@require_POST
@plain_form_fallback
def original_upload_import(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """Import the kept file: the page reloads with the originals, or the rows' errors show."""
    campaign = request.campaign
    try:
        pending, preview = _kept_preview(request, campaign)
    except CfannotateError as error:
        return _fragment(request, campaign, error=error)
    try:
        imported = originals_upload(campaign=campaign, preview=preview)
    except CfannotateError as error:
        return _fragment(request, campaign, preview=preview, token=pending.token, error=error)
    pending_upload_delete(pending)
    _forget(request, campaign)
    messages.success(request, sentence(f"Imported {imported} originals from {pending.file_name}"))
    if request.htmx:
        return HttpResponseClientRefresh()
    return redirect("campaign-data", campaign_id=campaign.id)


@campaign_owner_required
@require_POST
@plain_form_fallback
def original_upload_cancel(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """Forget the kept file; the empty form again."""
    campaign = request.campaign
    # Already gone, or not this user's: nothing to delete either way.
    with suppress(CfannotateError):
        pending_upload_delete(_pending(request, campaign))
    _forget(request, campaign)
    return _fragment(request, campaign)
