"""The invariants the database itself keeps."""

from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from cfannotate.crowd.models import InvitationLink, Platform, PlatformAction, Publication
from cfannotate.crowd.providers.base import SyncReport

pytestmark = pytest.mark.django_db


def _refused(**fields):
    with pytest.raises(IntegrityError), transaction.atomic():
        PlatformAction.objects.create(**fields)


def test_a_bonus_token_is_held_by_one_live_action_only():
    base = {"platform": Platform.MTURK, "action": "bonus", "amount": Decimal("1")}
    first = PlatformAction.objects.create(request_token="tok", **base)
    _refused(request_token="tok", **base)
    PlatformAction.objects.filter(pk=first.pk).update(outcome="failed", finished_at=timezone.now())
    PlatformAction.objects.create(request_token="tok", **base)  # a retry after a failure
    PlatformAction.objects.create(request_token="", **base)
    PlatformAction.objects.create(request_token="", **base)  # no token, no constraint


def test_a_bonus_is_positive_and_an_answered_action_has_an_end():
    _refused(platform=Platform.LINK, action="bonus", amount=Decimal("0"))
    _refused(platform=Platform.LINK, action="approve", outcome="succeeded")
    _refused(platform=Platform.LINK, action="approve", finished_at=timezone.now())


def test_link_uses_never_exceed_the_quota(campaign):
    link = InvitationLink.objects.create(campaign=campaign, name="lab", quota=1, uses=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        InvitationLink.objects.filter(pk=link.pk).update(uses=2)
    with pytest.raises(IntegrityError), transaction.atomic():
        InvitationLink.objects.create(campaign=campaign, name="zero", quota=0)
    InvitationLink.objects.create(campaign=campaign, name="open", quota=None, uses=500)


def test_only_mturk_has_a_sandbox_and_links_are_not_publications(campaign):
    with pytest.raises(IntegrityError), transaction.atomic():
        Publication.objects.create(campaign=campaign, platform=Platform.PROLIFIC, sandbox=True)
    with pytest.raises(IntegrityError), transaction.atomic():
        Publication.objects.create(campaign=campaign, platform=Platform.LINK)
    Publication.objects.create(campaign=campaign, platform=Platform.MTURK, external_id="X")
    with pytest.raises(IntegrityError), transaction.atomic():
        Publication.objects.create(campaign=campaign, platform=Platform.MTURK, external_id="X")


def test_a_sync_report_says_what_it_did_in_words():
    one = SyncReport(checked=1, updated=1, freed=1, reviews=1, problems=["x"])
    assert one.summary() == (
        "1 study or HIT refreshed, 1 submission checked, 1 abandoned assignment freed, "
        "1 platform decision recorded, 1 problem found."
    )
    assert SyncReport(checked=3, updated=2, freed=2).summary() == (
        "2 studies or HITs refreshed, 3 submissions checked, 2 abandoned assignments freed."
    )
