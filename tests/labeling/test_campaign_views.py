import pytest
from django.urls import reverse

from cfannotate.campaigns.models import CampaignStatus
from tests.factories import make_gold_round, make_original, make_unit

pytestmark = pytest.mark.django_db


def test_opening_without_units_says_what_to_do_first(logged_in, campaign):
    response = logged_in.post(
        reverse("labeling-open", args=[campaign.id]), headers={"HX-Request": "true"}
    )
    assert response.status_code == 409
    assert b"nothing to label yet" in response.content
    campaign.refresh_from_db()
    assert campaign.status == CampaignStatus.DRAFT


def test_open_warns_about_missing_gold_then_pause(logged_in, campaign):
    make_unit(make_original(campaign))
    response = logged_in.post(reverse("labeling-open", args=[campaign.id]), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    page = response.content.decode()
    assert "Fewer active gold rounds" in page and "No training round exists" in page
    assert "/join/" in page  # the invitation link
    campaign.refresh_from_db()
    assert campaign.status == CampaignStatus.LABELING

    assert (
        logged_in.post(
            reverse("labeling-pause", args=[campaign.id]), HTTP_HX_REQUEST="true"
        ).status_code
        == 200
    )
    campaign.refresh_from_db()
    assert campaign.status == CampaignStatus.PAUSED
    again = logged_in.post(reverse("labeling-pause", args=[campaign.id]), HTTP_HX_REQUEST="true")
    assert again.status_code == 409 and b"Only a campaign that is open" in again.content


def test_with_gold_and_training_rounds_there_is_no_warning(logged_in, campaign):
    make_unit(make_original(campaign))
    make_gold_round(campaign, "gold")
    make_gold_round(campaign, "gold")
    make_gold_round(campaign, "training")
    page = logged_in.post(
        reverse("labeling-open", args=[campaign.id]), HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "Fewer active gold" not in page and "No training round" not in page


def test_only_the_owner_may_open_and_only_by_post(client, other_researcher, campaign):
    url = reverse("labeling-open", args=[campaign.id])
    assert client.post(url).status_code == 302  # to the login page
    client.force_login(other_researcher)
    assert client.post(url).status_code == 404
    block = reverse("labeling-block", args=[campaign.id])
    assert client.get(block, HTTP_HX_REQUEST="true").status_code == 404
    assert client.get(block).status_code == 404
    client.force_login(campaign.owner)
    assert client.get(url).status_code == 405
    assert client.get(block, HTTP_HX_REQUEST="true").status_code == 200


def test_opening_right_after_an_import_waits_for_the_units_being_built(logged_in, campaign):
    from cfannotate.labeling.tasks import select_units

    make_original(campaign)
    select_units.enqueue(campaign.id)  # what an import or a finished run queues
    response = logged_in.post(reverse("labeling-open", args=[campaign.id]), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert "still being built" in response.content.decode()
    campaign.refresh_from_db()
    assert campaign.status == CampaignStatus.LABELING
