"""The crowd's facts for the campaign overview (registered with `campaigns.stages` in
`CrowdConfig.ready()`): how many ways in were handed out to workers, and how many
Prolific places the researcher must still add."""

from cfannotate.campaigns.models import Campaign
from cfannotate.crowd.models import InvitationLink, PersonalLink, Publication
from cfannotate.crowd.selectors import places_short, study_places


def crowd_facts(campaign: Campaign) -> dict:
    invitations = sum(
        model.objects.filter(campaign=campaign).count()
        for model in (InvitationLink, PersonalLink, Publication)
    )
    short = places_short(campaign, study_places(campaign))
    return {
        "invitations": invitations,
        "places_short": short.short if short is not None and not short.sweep_adds else 0,
    }
