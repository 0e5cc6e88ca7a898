"""The quality API's confirm-all operation (the page's "accept the filters' proposals")."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from cfannotate.quality.models import DecisionState, WorkerDecision
from cfannotate.quality.services import quality_refresh
from tests.factories import make_labeling_campaign, make_user
from tests.quality.conftest import work

pytestmark = pytest.mark.django_db


@pytest.fixture
def proposed(researcher):
    """A campaign whose filters proposed a decision per worker (one careful, one fast)."""
    campaign = make_labeling_campaign(
        units=6, gold=2, rounds_per_assignment=3, gold_rounds_per_assignment=2
    )
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    work(campaign, seconds=30, real=lambda _: (True, "negative"))
    work(campaign, seconds=9, gold_right=3, real=lambda _: (True, "negative"))
    quality_refresh(campaign=campaign)
    assert WorkerDecision.objects.filter(campaign=campaign, state=DecisionState.PROPOSED).exists()
    return campaign


def test_confirm_accepts_every_untouched_proposal(api_client, proposed, researcher):
    url = reverse("api-decisions-confirm", args=[proposed.id])
    proposals = WorkerDecision.objects.filter(campaign=proposed, state=DecisionState.PROPOSED)
    count = proposals.count()
    response = api_client.post(url)
    assert response.status_code == 200 and response.json() == {"confirmed": count}
    confirmed = WorkerDecision.objects.filter(campaign=proposed, state=DecisionState.CONFIRMED)
    assert confirmed.count() == count
    assert set(confirmed.values_list("decided_by", flat=True)) == {researcher.id}
    assert api_client.post(url).json() == {"confirmed": 0}  # nothing left to confirm


def test_confirm_is_the_owners_only(proposed):
    url = reverse("api-decisions-confirm", args=[proposed.id])
    assert APIClient().post(url).status_code in (401, 403)
    stranger = APIClient()
    stranger.force_authenticate(make_user())
    response = stranger.post(url)
    assert response.status_code == 404 and response.json()["message"]
    assert not WorkerDecision.objects.filter(state=DecisionState.CONFIRMED).exists()
