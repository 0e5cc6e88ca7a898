"""Writes that put a campaign on a platform and keep it in step: publish, create a study, sync."""

import secrets

from django.db import transaction
from django.urls import reverse

from cfannotate.campaigns.models import Campaign, CampaignStatus
from cfannotate.core.exceptions import CfannotateError, Conflict, InvalidInput
from cfannotate.core.worker_tokens import entry_token
from cfannotate.crowd.models import ActionKind, Platform, Publication
from cfannotate.crowd.platform_calls import platform_call
from cfannotate.crowd.providers import provider_for
from cfannotate.crowd.providers.base import SyncReport
from cfannotate.crowd.providers.mturk import MTurkOptions
from cfannotate.crowd.providers.prolific import ProlificOptions
from cfannotate.crowd.services import platform_action_begin
from cfannotate.labeling.assignments import assignments_expire


def entry_url(*, publication: Publication, base_url: str) -> str:
    """The address a platform sends workers to (MTurk's ExternalURL, Prolific's study URL)."""
    path = reverse(
        "crowd-entry",
        kwargs={"platform": publication.platform, "token": entry_token(publication.id)},
    )
    return base_url.rstrip("/") + path


def _check_base_url(base_url: str, platform_name: str) -> None:
    if not base_url.startswith("https://"):
        raise InvalidInput(
            f"{platform_name} sends workers only to HTTPS pages, and this site's address is "
            f"{base_url or 'unknown'}: set CFANNOTATE_PUBLIC_URL to the https:// address "
            "workers reach it at.",
            fields={"base_url": ["Must start with https://."]},
        )


def _publish(
    *,
    campaign: Campaign,
    platform: str,
    options: dict,
    base_url: str,
    actor=None,
    sandbox: bool = False,
    completion_code: str = "",
) -> Publication:
    if campaign.status != CampaignStatus.LABELING:
        raise Conflict(
            "Open the campaign for labeling before publishing it: workers would find it closed."
        )
    provider = provider_for(platform)
    # A site that cannot publish there records nothing; what the platform refuses is kept.
    provider.check_configured(sandbox=sandbox)
    with transaction.atomic():
        publication = Publication(
            campaign=campaign,
            platform=platform,
            sandbox=sandbox,
            options=options,
            completion_code=completion_code,
            created_by=actor if getattr(actor, "is_authenticated", False) else None,
        )
        publication.full_clean()
        publication.save()
    action = platform_action_begin(
        platform=platform, action=ActionKind.PUBLISH, campaign=campaign, publication=publication
    )
    try:
        with platform_call(
            action,
            fix="Sync the status to see what was created on the platform before trying again.",
        ) as call:
            provider.publish(
                publication=publication,
                entry_url=entry_url(publication=publication, base_url=base_url),
            )
            call.request_id = publication.external_id
            call.response = {"hits": list(publication.hits.values_list("hit_id", flat=True))}
    except CfannotateError:
        if not publication.external_id:
            Publication.objects.filter(pk=publication.pk).update(status="failed")
        raise
    return publication


def mturk_publish(
    *, campaign: Campaign, options: MTurkOptions, base_url: str, actor=None
) -> Publication:
    """A HIT type with the options' reward, duration and qualifications, and HITs whose
    ExternalQuestion frames the campaign's entry URL."""
    options.check()
    _check_base_url(base_url, "MTurk")
    return _publish(
        campaign=campaign,
        platform=Platform.MTURK,
        options=options.as_json(),
        base_url=base_url,
        actor=actor,
        sandbox=options.sandbox,
    )


def prolific_study_create(
    *, campaign: Campaign, options: ProlificOptions, base_url: str, actor=None
) -> Publication:
    """A draft Prolific study with our entry URL and a fresh completion code; the researcher
    reviews, funds and publishes it on Prolific."""
    options.check()
    _check_base_url(base_url, "Prolific")
    return _publish(
        campaign=campaign,
        platform=Platform.PROLIFIC,
        options=options.as_json(),
        base_url=base_url,
        actor=actor,
        completion_code=secrets.token_hex(4).upper(),
    )


def platform_sync(*, campaign: Campaign) -> SyncReport:
    """Bring every publication of the campaign in line with its platform, and free the units
    of abandoned assignments (returned or timed out there, or past their lease here)."""
    report = SyncReport()
    report.freed += assignments_expire(campaign=campaign)
    for publication in campaign.publications.exclude(external_id=""):
        action = platform_action_begin(
            platform=publication.platform,
            action=ActionKind.SYNC,
            campaign=campaign,
            publication=publication,
        )
        try:
            with platform_call(action, fix="Sync again later.") as call:
                found = provider_for(publication.platform).sync(publication=publication)
                call.response = {"summary": found.summary(), "problems": found.problems}
        except CfannotateError as error:
            fix = getattr(error, "fix", "")
            report.problems.append(
                f"{publication.get_platform_display()}: {error.message}"
                + (f" What to fix: {fix}" if fix else "")
            )
            continue
        report.merge(found)
    return report
