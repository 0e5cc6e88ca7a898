"""The crowd's facts for the campaign overview (registered with `campaigns.stages` in
`CrowdConfig.ready()`): how many ways in were handed out to workers."""

from cfannotate.campaigns.models import Campaign
from cfannotate.crowd.models import InvitationLink, PersonalLink, Publication


def crowd_facts(campaign: Campaign) -> dict:
    invitations = sum(
        model.objects.filter(campaign=campaign).count()
        for model in (InvitationLink, PersonalLink, Publication)
    )
    return {"invitations": invitations}
