"""The labeling API: progress, open, pause and the budget order, with the page's checks."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from cfannotate.campaigns.models import Campaign, CampaignStatus
from cfannotate.labeling.models import LabelingUnit
from tests.factories import make_gold_round, make_labeling_campaign, make_original, make_unit
from tests.labeling.test_ordering import EDITS, relationship

pytestmark = pytest.mark.django_db


def _url(name, campaign):
    return reverse(name, args=[campaign.id])


def test_open_warns_then_pause_then_pausing_again_is_a_conflict(api_client, campaign):
    make_unit(make_original(campaign))
    opened = api_client.post(_url("api-labeling-open", campaign))
    assert opened.status_code == 200
    body = opened.json()
    assert body["status"] == CampaignStatus.LABELING and body["units"] == 1
    assert any("Fewer active gold rounds" in warning for warning in body["warnings"])
    assert any("No training round exists" in warning for warning in body["warnings"])
    campaign.refresh_from_db()
    assert campaign.status == CampaignStatus.LABELING

    paused = api_client.post(_url("api-labeling-pause", campaign))
    assert paused.status_code == 200 and paused.json()["status"] == CampaignStatus.PAUSED
    again = api_client.post(_url("api-labeling-pause", campaign))
    assert again.status_code == 409
    assert again.json() == {
        "message": "Only a campaign that is open for labeling can be paused.",
        "fields": {},
    }


def test_opening_with_nothing_to_label_is_a_conflict(api_client, campaign):
    response = api_client.post(_url("api-labeling-open", campaign))
    assert response.status_code == 409
    assert "nothing to label yet" in response.json()["message"]
    campaign.refresh_from_db()
    assert campaign.status == CampaignStatus.DRAFT


def test_a_finished_campaign_cannot_be_opened(api_client, campaign):
    make_unit(make_original(campaign))
    Campaign.objects.filter(pk=campaign.pk).update(status=CampaignStatus.FINISHED)
    response = api_client.post(_url("api-labeling-open", campaign))
    assert response.status_code == 409 and "finished" in response.json()["message"]


def test_progress_counts_units_and_active_rounds(api_client, campaign):
    make_unit(make_original(campaign), judgments_needed=2)
    make_gold_round(campaign, "gold")
    make_gold_round(campaign, "training")
    body = api_client.get(_url("api-labeling-progress", campaign)).json()
    assert body["units"] == 1 and body["judgments_needed"] == 2 and body["percent"] == 0
    assert (body["gold_rounds"], body["training_rounds"]) == (1, 1)
    assert body["status"] == CampaignStatus.DRAFT and body["warnings"] == []


def test_the_operations_are_the_owners_only(campaign, other_researcher):
    make_unit(make_original(campaign))
    client = APIClient()
    for name in ("api-labeling-open", "api-labeling-pause", "api-labeling-order"):
        assert client.post(_url(name, campaign)).status_code in (401, 403)
    client.force_authenticate(other_researcher)
    for name in ("api-labeling-open", "api-labeling-pause", "api-labeling-order"):
        response = client.post(_url(name, campaign), {"budget": 1}, format="json")
        assert response.status_code == 404 and response.json()["message"]
    assert client.get(_url("api-labeling-progress", campaign)).status_code == 404
    campaign.refresh_from_db()
    assert campaign.status == CampaignStatus.DRAFT


def test_order_by_budget(api_client, researcher):
    # Three units whose counterfactuals' edits are known (as in test_ordering).
    campaign = make_labeling_campaign(units=3, gold=0, training=0, rounds_per_assignment=1)
    Campaign.objects.filter(pk=campaign.pk).update(owner=researcher)
    units = LabelingUnit.objects.filter(campaign=campaign).order_by("id")
    for unit, edits in zip(units, EDITS.values(), strict=True):
        for item, edit in zip(unit.items.order_by("position"), edits, strict=True):
            item.candidate.edit = {"relationship": relationship("ignored", *edit)}
            item.candidate.save(update_fields=["edit"])
    response = api_client.post(_url("api-labeling-order", campaign), {"budget": 2}, format="json")
    assert response.status_code == 200
    assert response.json() == {
        "budget": 2,
        "originals": 2,
        "units": 2,
        "candidates_considered": 9,
    }


@pytest.mark.parametrize("body", [{}, {"budget": 0}, {"budget": "two"}, {"budget": -3}])
def test_order_needs_a_budget_of_one_or_more(api_client, campaign, body):
    response = api_client.post(_url("api-labeling-order", campaign), body, format="json")
    assert response.status_code == 400
    assert "budget" in response.json()["fields"]


def test_order_without_analysed_units_says_what_to_do(api_client, campaign):
    make_unit(make_original(campaign))
    response = api_client.post(_url("api-labeling-order", campaign), {"budget": 2}, format="json")
    assert response.status_code == 400
    assert "generate and select first" in response.json()["message"]
