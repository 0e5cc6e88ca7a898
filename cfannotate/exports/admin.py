"""Admin actions on campaigns that download an export, added to CampaignAdmin here: the admin
imports this module after campaigns' (INSTALLED_APPS order), and campaigns never imports exports."""

from django.contrib import admin, messages

from cfannotate.campaigns.admin import CampaignAdmin
from cfannotate.exports.files import export_prepare, export_response
from cfannotate.exports.formats import FORMATS
from cfannotate.exports.selectors import EXPORT_KINDS


def _download_action(kind: str, format: str):
    @admin.action(
        description=f"Download the {EXPORT_KINDS[kind].title.lower()} ({format.upper()})",
        permissions=["view"],
    )
    def download(modeladmin, request, queryset):
        campaigns = list(queryset.order_by("pk")[:2])
        if len(campaigns) != 1:
            modeladmin.message_user(
                request, "Select exactly one campaign to download an export.", messages.ERROR
            )
            return None
        return export_response(export_prepare(campaign=campaigns[0], kind=kind, format=format))

    # The admin tells actions apart by their function names.
    download.__name__ = f"export_{kind}_{format}"
    return download


EXPORT_ACTIONS = [_download_action(kind, format) for format in FORMATS for kind in EXPORT_KINDS]

CampaignAdmin.actions = [*CampaignAdmin.actions, *EXPORT_ACTIONS]
