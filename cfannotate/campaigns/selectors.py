"""Reads of campaigns and originals, always scoped from the requesting user."""

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, QuerySet

from cfannotate.campaigns.models import Campaign, Original
from cfannotate.core.exceptions import NotFound


def campaigns_for_owner(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Campaign]:
    if not user.is_authenticated:
        return Campaign.objects.none()
    return (
        Campaign.objects.filter(owner=user)
        .annotate(
            original_count=Count("originals", distinct=True),
            candidate_count=Count("candidates", distinct=True),
        )
        .order_by("-created_at")
    )


def campaign_get_for_owner(*, user, campaign_id: int) -> Campaign:
    """The campaign if `user` owns it; NotFound otherwise, so ids don't leak."""
    if user.is_authenticated:
        campaign = Campaign.objects.filter(pk=campaign_id, owner=user).first()
        if campaign is not None:
            return campaign
    raise NotFound(f"No campaign {campaign_id} among yours.")


def originals_of(campaign: Campaign) -> QuerySet[Original]:
    return campaign.originals.select_related("label").order_by("id")
