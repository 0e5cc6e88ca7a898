"""The gold page's authoring form: what the researcher is told after a round is made."""

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from tests.factories import make_original

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("kind", "said"), [("training", "A training round"), ("gold", "A gold round")]
)
def test_an_authored_round_is_named_by_its_kind_with_one_final_period(
    client, researcher, campaign, kind, said
):
    client.force_login(researcher)
    original = make_original(campaign, text="A sentence that ends with a period.")
    label = campaign.labels.first().value
    response = client.post(
        reverse("gold-author", args=[campaign.id]),
        {"original": original.external_id, "kind": kind, "text-1": "A sentence.", "label-1": label},
    )
    assert response.status_code == 302
    [message] = [str(m) for m in get_messages(response.wsgi_request)]
    assert message == f"{said} was authored on original {original.external_id}."
    assert ".." not in message


@pytest.mark.parametrize(
    ("kind", "said"), [("training", "A training round"), ("gold", "A gold round")]
)
def test_an_original_id_that_ends_with_a_period_does_not_double_it(
    client, researcher, campaign, kind, said
):
    client.force_login(researcher)
    original = make_original(campaign)
    original.external_id = "review-12."
    original.save(update_fields=["external_id"])
    response = client.post(
        reverse("gold-author", args=[campaign.id]),
        {
            "original": "review-12.",
            "kind": kind,
            "text-1": "A sentence.",
            "label-1": campaign.labels.first().value,
        },
    )
    [message] = [str(m) for m in get_messages(response.wsgi_request)]
    assert message == f"{said} was authored on original review-12."
    assert "gold" not in message if kind == "training" else "training" not in message
