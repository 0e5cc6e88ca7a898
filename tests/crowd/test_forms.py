"""The crowd block's forms take numbers in plain digits only: Python reads "1_0" as 10."""

import pytest
from django.urls import reverse

from cfannotate.crowd.forms import BonusForm, MTurkPublishForm, PlacesForm
from cfannotate.crowd.models import PlatformAction
from cfannotate.labeling.assignments import assignment_start
from tests.crowd.conftest import finish
from tests.factories import make_worker


@pytest.mark.parametrize("amount", ["1_0", "\u0661\u0662", "1e1", "NaN"])
def test_a_bonus_in_anything_but_plain_digits_is_refused(amount):
    form = BonusForm({"amount": amount, "reason": "Good", "unique_token": "t-1"})
    assert not form.is_valid()
    assert form.errors["amount"] == ["Enter a number. Use digits, e.g. 0.50."]


def test_a_bonus_in_plain_digits_is_read():
    form = BonusForm({"amount": " 0.50 ", "reason": "Good", "unique_token": "t-1"})
    assert form.is_valid(), form.errors
    assert str(form.cleaned_data["amount"]) == "0.50"


def test_every_count_and_reward_takes_plain_digits_only():
    places = PlacesForm({"places": "1_000"})
    publish = MTurkPublishForm({"reward": "\u0660.\u0665", "assignments": "1_0"})
    assert places.errors["places"] == ["Enter a whole number. Use digits, e.g. 12."]
    assert publish.errors["reward"] == ["Enter a number. Use digits, e.g. 0.50."]
    assert publish.errors["assignments"] == ["Enter a whole number. Use digits, e.g. 12."]


@pytest.mark.django_db
def test_the_bonus_button_pays_nothing_for_1_0(client, campaign):
    """The platforms block's bonus form paid 10.00 for amount=1_0."""
    client.force_login(campaign.owner)
    assignment = finish(assignment_start(campaign=campaign, worker=make_worker()))
    url = reverse("crowd-bonus", args=[campaign.id, assignment.id])
    bonus = {"amount": "1_0", "reason": "Good", "unique_token": "form-token-1"}

    response = client.post(url, bonus, headers={"HX-Request": "true"})

    assert response.status_code == 400
    assert "Use digits, e.g. 0.50." in response.text
    assert not PlatformAction.objects.filter(action="bonus").exists()
