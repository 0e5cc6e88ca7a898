"""Places on a Prolific study: more of them by hand, or by themselves up to a cap.

A study is made for the assignments the units needed on the day it was made; re-queued
disputes and the replaced rounds of removed workers need more (`selectors.places_short`).
Prolific lets a study's places grow, drafts and published studies alike (a completed one
becomes active again). A researcher adds them on the Platforms section, through the API
or `manage.py prolific_places`; or lets the labeling sweep add them as they are needed,
never past a cap the researcher set, since every place is paid for.
"""

import logging
from datetime import timedelta

from django.utils import timezone

from cfannotate.campaigns.models import Campaign
from cfannotate.core.exceptions import CfannotateError, Conflict, InvalidInput
from cfannotate.core.text import counted
from cfannotate.crowd.models import ActionKind, ActionOutcome, Platform, PlatformAction, Publication
from cfannotate.crowd.platform_calls import platform_call
from cfannotate.crowd.providers import provider_for
from cfannotate.crowd.selectors import PLACES_CAP, places_short, study_places
from cfannotate.crowd.services import platform_action_begin

logger = logging.getLogger(__name__)

MAX_PLACES = 100_000  # as for a new study (ProlificOptions.check)
# After Prolific refused places (an unfunded workspace, say), the sweep waits this long
# before asking again, rather than once a minute.
AUTO_RETRY_AFTER = timedelta(hours=1)


def _created_on_prolific(publication: Publication) -> None:
    if not publication.external_id:
        raise Conflict(
            f"{publication.get_platform_display()} publication {publication.pk} was not created "
            "on the platform, so it has no places to add to: publish again."
        )


def _places_between(value: object, low: int, *, field: str, say: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_PLACES:
        raise InvalidInput(say, fields={field: [f"Between {low} and {MAX_PLACES}."]})
    return value


def publication_places_add(*, publication: Publication, places: object) -> Publication:
    """Let `places` more workers take a Prolific study; the other platforms are refused
    with what to do instead."""
    places = _places_between(places, 1, field="places", say=f"Add 1 to {MAX_PLACES} places.")
    _created_on_prolific(publication)
    # The total Prolific is sent is counted from the stored places, not a copy read
    # earlier: a sweep and a researcher adding at once must not send a smaller total.
    publication.refresh_from_db(fields=["options"])
    total = int(publication.options.get("places") or 0) + places
    if total > MAX_PLACES:
        raise InvalidInput(
            f"The study would have {total} places, more than {MAX_PLACES}.",
            fields={"places": [f"At most {MAX_PLACES} in all."]},
        )
    action = platform_action_begin(
        platform=publication.platform,
        action=ActionKind.PLACES,
        campaign=publication.campaign,
        publication=publication,
    )
    with platform_call(
        action, fix="Sync the status to see the study's places on Prolific."
    ) as call:
        call.answered(
            provider_for(publication.platform).places_set(publication=publication, total=total)
        )
    return publication


def places_added_message(publication: Publication) -> str:
    """What the page and the command say once places were added (2 or more by then)."""
    places = int(publication.options["places"])
    return f"Prolific study {publication.external_id} now lets {places} workers in."


def publication_places_cap_set(*, publication: Publication, up_to: object) -> Publication:
    """Let the labeling sweep add places to a Prolific study as the units need them, up to
    `up_to` places in all; None stops it. Nothing is asked of Prolific here."""
    if publication.platform != Platform.PROLIFIC:
        raise Conflict(
            f"Only Prolific studies take more places by themselves, not "
            f"{publication.get_platform_display()} publications."
        )
    _created_on_prolific(publication)
    newest = study_places(publication.campaign)[-1].publication
    if newest.pk != publication.pk:
        raise Conflict(
            f"Only the campaign's newest Prolific study, {newest.external_id}, takes places "
            "by itself: set the cap there."
        )
    publication.refresh_from_db(fields=["options"])  # places a sweep just added stay
    options = dict(publication.options)
    if up_to is None:
        options.pop(PLACES_CAP, None)
    else:
        places = int(options.get("places") or 0)
        options[PLACES_CAP] = _places_between(
            up_to,
            max(places, 1),
            field="up_to",
            say=f"Cap the study at {max(places, 1)} to {MAX_PLACES} places: it has {places}.",
        )
    publication.options = options
    publication.save(update_fields=["options"])
    return publication


def places_cap_message(publication: Publication) -> str:
    cap = publication.options.get(PLACES_CAP)
    if cap is None:
        return f"Prolific study {publication.external_id} takes more places only when you add them."
    return (
        f"Prolific study {publication.external_id} takes more places by itself as the units "
        f"need them, up to {cap} in all."
    )


def places_top_up(*, campaign: Campaign) -> int:
    """Add the places the units lack to the campaign's newest Prolific study, as far as its
    cap allows (the labeling sweep calls this); the number added, 0 when none was needed
    or allowed.

    A refusal is logged with the platform actions and asked again only after
    AUTO_RETRY_AFTER; it never stops the sweep.
    """
    short = places_short(campaign, study_places(campaign))
    if short is None:
        return 0
    study = short.newest
    added = min(short.short, (study.up_to or 0) - study.places)
    if added <= 0 or _refused_lately(study.publication):
        return 0
    publication = study.publication
    try:
        publication_places_add(publication=publication, places=added)
    except CfannotateError as error:
        logger.warning(
            "Adding %s to Prolific study %s failed: %s",
            counted(added, "place"),
            publication.external_id,
            error.message,
        )
        return 0
    logger.info("Added %s to Prolific study %s", counted(added, "place"), publication.external_id)
    return added


def _refused_lately(publication: Publication) -> bool:
    latest = (
        PlatformAction.objects.filter(publication=publication, action=ActionKind.PLACES)
        .order_by("-created_at", "-id")
        .first()
    )
    return (
        latest is not None
        and latest.outcome == ActionOutcome.FAILED
        and latest.created_at > timezone.now() - AUTO_RETRY_AFTER
    )
