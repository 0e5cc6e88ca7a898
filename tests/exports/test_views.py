"""The campaign page's download links and the download they lead to."""

import json

from django.http import StreamingHttpResponse
from django.urls import reverse

from cfannotate.quality.models import AggregatedLabel
from tests.factories import make_campaign


def download_url(campaign, kind: str) -> str:
    return reverse("export-download", args=[campaign.id, kind])


def test_the_campaign_page_links_every_export(client, researcher, campaign):
    client.force_login(researcher)

    html = client.get(reverse("campaign-exports", args=[campaign.id])).content.decode()

    for kind in ("contrast", "augmentation", "judgments"):
        for format in ("jsonl", "csv"):
            assert f'href="{download_url(campaign, kind)}?format={format}"' in html


def test_the_page_says_what_each_file_holds_now(client, researcher, labeled, campaign):
    client.force_login(researcher)
    url = reverse("campaign-exports", args=[labeled.campaign.id])
    words = " ".join(client.get(url).content.decode().split())
    assert "Quality control kept a label for 4 counterfactuals when it last ran" in words
    assert "5 (2 originals, 3 counterfactuals)" in words  # the augmentation set's rows
    assert '<td class="num">27</td>' in words  # raw judgments
    AggregatedLabel.objects.update(kept=False)
    words = " ".join(client.get(url).content.decode().split())
    assert "No label is kept yet: quality control keeps one once enough qualified" in words

    nothing = " ".join(
        client.get(reverse("campaign-exports", args=[campaign.id])).content.decode().split()
    )
    assert "No judgment yet: the contrast and augmentation sets fill as workers label" in nothing


def test_a_link_streams_the_file_to_the_owner(client, researcher, labeled):
    client.force_login(researcher)

    response = client.get(download_url(labeled.campaign, "contrast") + "?format=jsonl")

    assert response.status_code == 200 and isinstance(response, StreamingHttpResponse)
    assert response["Content-Disposition"] == (
        f'attachment; filename="{labeled.campaign.slug}-contrast.jsonl"'
    )
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert [json.loads(line)["label"] for line in lines] == ["positive", "positive"]


def test_a_bad_request_is_a_400_page_that_says_why(client, researcher, campaign):
    client.force_login(researcher)

    bad_format = client.get(download_url(campaign, "contrast") + "?format=xml")
    bad_kind = client.get(download_url(campaign, "labels"))
    bad_flag = client.get(download_url(campaign, "judgments") + "?include_gold=perhaps")

    assert bad_format.status_code == 400
    assert (
        "Unknown format &#x27;xml&#x27;; choose one of: jsonl, csv." in bad_format.content.decode()
    )
    assert bad_kind.status_code == 400 and "Unknown export" in bad_kind.content.decode()
    assert bad_flag.status_code == 400
    assert "include_gold must be true or false" in bad_flag.content.decode()


def test_only_the_owner_downloads(client, researcher, other_researcher):
    theirs = make_campaign(owner=other_researcher)
    anonymous = client.get(download_url(theirs, "contrast"))
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]

    client.force_login(researcher)
    assert client.get(download_url(theirs, "contrast")).status_code == 404
