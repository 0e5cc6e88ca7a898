"""The evaluation API: runs for the owner, field errors as 400s, other owners' campaigns as 404s."""

import pytest
from rest_framework.test import APIClient

from cfannotate.evaluation.models import Evaluation
from tests.evaluation.conftest import exact_predictions
from tests.factories import make_campaign


def url(campaign, tail: str = "") -> str:
    return f"/api/campaigns/{campaign.id}/evaluations/{tail}"


def test_a_run_is_created_listed_and_read_back(api_client, labeled):
    response = api_client.post(
        url(labeled.campaign, "run/"),
        {"kind": "table2", "predictions": exact_predictions(labeled), "bootstrap": 100},
        format="json",
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["kind"], body["source"], body["created_by"]) == ("table2", "uploaded", "alice")
    assert body["result"]["contrast_accuracy"]["value"] == 0.5
    assert body["parameters"]["bootstrap"] == 100

    listed = api_client.get(url(labeled.campaign)).json()
    assert [row["id"] for row in listed["results"]] == [body["id"]]
    assert api_client.get(url(labeled.campaign, "?kind=table3")).json()["results"] == []
    assert api_client.get(url(labeled.campaign, f"{body['id']}/")).json() == body


def test_table3_runs_with_its_sizes(api_client, evaluable):
    response = api_client.post(
        url(evaluable.campaign, "run/"),
        {"kind": "table3", "m": 1, "test_fraction": 0.5, "seeds": [3]},
        format="json",
    )

    assert response.status_code == 201, response.json()
    result = response.json()["result"]
    assert (result["m"], result["seeds"]) == (1, [3])
    assert set(result) >= {"comp_contrast_accuracy", "aug_contrast_accuracy", "splits"}


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "kind"),
        ({"kind": "table9"}, "kind"),
        ({"kind": "table3", "test_fraction": 1.5}, "test_fraction"),
        ({"kind": "table3", "seeds": []}, "seeds"),
        ({"kind": "table3", "n": 0}, "n"),
        ({"kind": "table2", "folds": 1}, "folds"),
        ({"kind": "table2", "bootstrap": 0}, "bootstrap"),
        ({"kind": "table2", "predictions": []}, "predictions"),
        ({"kind": "table2", "predictions": ["a row"]}, "predictions.0"),
        ({"kind": "table2", "seed": 2**70}, "seed"),
        ({"kind": "table2", "seed": 2**32}, "seed"),
        ({"kind": "table3", "seeds": [1180591620717411303424]}, "seeds.0"),
        ({"kind": "table3", "n": 10**9}, "n"),
        ({"kind": "table3", "m": 10**9}, "m"),
        # int() and float() read these; a person did not mean them.
        ({"kind": "table3", "m": "1_0"}, "m"),
        ({"kind": "table3", "test_fraction": "\u0660.\u0665"}, "test_fraction"),
        ({"kind": "table3", "seeds": [3, "\u0661"]}, "seeds.1"),
    ],
)
def test_bad_input_is_a_400_with_field_errors(api_client, campaign, payload, field):
    response = api_client.post(url(campaign, "run/"), payload, format="json")

    assert response.status_code == 400
    body = response.json()
    assert field in body["fields"], body
    assert body["message"]
    assert not Evaluation.objects.exists()


def test_what_the_data_cannot_give_is_a_400_that_says_why(api_client, labeled):
    incomplete = exact_predictions(labeled)[:3]

    response = api_client.post(
        url(labeled.campaign, "run/"), {"kind": "table2", "predictions": incomplete}, format="json"
    )

    assert response.status_code == 400
    body = response.json()
    assert "missing for 1 counterfactual" in body["message"]
    assert body["fields"]["predictions"]
    cross_fit = api_client.post(url(labeled.campaign, "run/"), {"kind": "table2"}, format="json")
    assert cross_fit.status_code == 400
    assert "Upload a training set" in cross_fit.json()["message"]


def test_sizes_the_campaign_cannot_give_are_a_400_under_their_field(api_client, evaluable):
    response = api_client.post(
        url(evaluable.campaign, "run/"),
        {"kind": "table3", "n": 10_000, "test_fraction": 0.5, "seeds": [3]},
        format="json",
    )
    both = api_client.post(
        url(evaluable.campaign, "run/"),
        {"kind": "table3", "n": 6, "m": 1, "test_fraction": 0.5, "seeds": [3]},
        format="json",
    )
    assert both.status_code == 400 and set(both.json()["fields"]) == {"n", "m"}
    assert response.status_code == 400
    body = response.json()
    assert set(body["fields"]) == {"n"}
    assert body["fields"]["n"][0].startswith("No room for counterfactuals")
    assert not Evaluation.objects.exists()


def test_an_unknown_kind_filter_is_a_400(api_client, campaign):
    response = api_client.get(url(campaign, "?kind=table9"))
    assert response.status_code == 400
    assert "kind" in response.json()["fields"]


def test_another_owners_campaign_and_runs_are_404s(labeled, other_researcher):
    evaluation = Evaluation.objects.create(
        campaign=labeled.campaign, kind="table3", source="baseline", result={}
    )
    client = APIClient()
    client.force_authenticate(other_researcher)

    assert client.get(url(labeled.campaign)).status_code == 404
    assert client.get(url(labeled.campaign, f"{evaluation.id}/")).status_code == 404
    response = client.post(url(labeled.campaign, "run/"), {"kind": "table2"}, format="json")
    assert response.status_code == 404
    assert Evaluation.objects.count() == 1


def test_a_run_of_another_campaign_is_a_404(api_client, labeled, researcher):
    mine_too = make_campaign(owner=researcher)
    evaluation = Evaluation.objects.create(
        campaign=labeled.campaign, kind="table3", source="baseline", result={}
    )

    response = api_client.get(url(mine_too, f"{evaluation.id}/"))

    assert response.status_code == 404
    assert response.json()["message"] == f"No evaluation {evaluation.id} in this campaign."


def test_anonymous_requests_are_refused(labeled):
    response = APIClient().get(url(labeled.campaign))
    assert response.status_code in (401, 403)
