"""The admin actions on campaigns that download an export."""

import pytest
from django.http import StreamingHttpResponse
from django.urls import reverse

from tests.factories import make_campaign, make_user

CHANGELIST = reverse("admin:campaigns_campaign_changelist")


@pytest.fixture
def staff(client, db):
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    return client


def test_the_action_streams_the_selected_campaigns_export(staff, labeled):
    response = staff.post(
        CHANGELIST,
        {"action": "export_augmentation_csv", "_selected_action": [labeled.campaign.id]},
    )

    assert response.status_code == 200 and isinstance(response, StreamingHttpResponse)
    assert response["Content-Disposition"] == (
        f'attachment; filename="{labeled.campaign.slug}-augmentation.csv"'
    )
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert lines[0].startswith("original_id,candidate_id,is_original,flips_label,")
    assert len(lines) == 6


def test_every_kind_and_format_is_offered(staff, campaign):
    html = staff.get(CHANGELIST).content.decode()
    for kind in ("contrast", "augmentation", "judgments"):
        for format in ("jsonl", "csv"):
            assert f'value="export_{kind}_{format}"' in html


def test_more_than_one_campaign_is_refused_with_a_message(staff, campaign):
    other = make_campaign(owner=campaign.owner)

    response = staff.post(
        CHANGELIST,
        {"action": "export_contrast_jsonl", "_selected_action": [campaign.id, other.id]},
        follow=True,
    )

    assert response.status_code == 200
    assert "Select exactly one campaign to download an export." in response.content.decode()
