"""List endpoints filtered by a choice refuse an unknown value by name, and page."""

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

LISTS = [
    ("api-gold-list", "kind", ["training", "gold"]),
    ("api-evaluation-list", "kind", ["table2", "table3"]),
    ("api-decision-list", "state", ["proposed", "confirmed"]),
]


@pytest.mark.parametrize(("name", "param", "known"), LISTS)
def test_an_unknown_filter_value_is_a_400_that_names_the_choices(
    api_client, campaign, name, param, known
):
    url = reverse(name, kwargs={"campaign_id": campaign.id})
    refused = api_client.get(url, {param: "nonsense"})
    assert refused.status_code == 400
    body = refused.json()
    assert body["message"] == f"Unknown {param} 'nonsense'."
    assert all(value in body["fields"][param][0] for value in known)
    for value in ("", known[0]):
        listed = api_client.get(url, {param: value} if value else {})
        assert listed.status_code == 200
        assert listed.json()["results"] == [] and listed.json()["count"] == 0
