"""What the crowd commands share: finding a campaign, one clear line for every error."""

from django.core.management.base import CommandError

from cfannotate.campaigns.models import Campaign
from cfannotate.core.exceptions import CfannotateError


def campaign_or_error(campaign_id: int) -> Campaign:
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        raise CommandError(f"No campaign with id {campaign_id}.")
    return campaign


def command_error(error: CfannotateError) -> CommandError:
    details = "; ".join(
        f"{where}: {', '.join(messages)}" for where, messages in error.fields.items()
    )
    return CommandError(error.message + (f" ({details})" if details else ""))


def base_url_or_error(given: str | None) -> str:
    from cfannotate.crowd.providers import public_base_url

    base_url = (given or public_base_url()).rstrip("/")
    if not base_url:
        raise CommandError(
            "Where do workers reach this site? Pass --base-url https://... or set "
            "CFANNOTATE_PUBLIC_URL."
        )
    return base_url
