from cfannotate.campaigns.selectors import campaigns_for_owner
from cfannotate.quality.models import AggregatedLabel
from tests.factories import make_campaign, make_candidate, make_original


def test_home_lists_my_campaigns(client, researcher, other_researcher):
    make_campaign(owner=researcher, name="Mine <b>bold</b>")
    make_campaign(owner=other_researcher, name="Theirs")
    client.force_login(researcher)
    html = client.get("/").content.decode()
    assert "Mine &lt;b&gt;bold&lt;/b&gt;" in html
    assert "Theirs" not in html


def test_the_list_counts_originals_candidates_and_labels_without_joining_them(researcher):
    """Counted per campaign by subqueries: joining originals to candidates to count both
    scanned their product (870,000 rows for 200 originals and 4,300 candidates)."""
    busy, empty = make_campaign(owner=researcher), make_campaign(owner=researcher)
    for number in range(3):
        original = make_original(busy)
        for _ in range(number + 1):
            make_candidate(original)
    kept, split = busy.candidates.order_by("id")[:2]
    AggregatedLabel.objects.create(
        candidate=kept,
        label=busy.labels.first(),
        is_valid=True,
        kept=True,
        votes=2,
        qualified_votes=2,
        agreement=1,
    )
    AggregatedLabel.objects.create(
        candidate=split, is_valid=True, kept=False, votes=2, qualified_votes=2, agreement=0.5
    )
    listed = {
        c.pk: (c.original_count, c.candidate_count, c.kept_count)
        for c in campaigns_for_owner(researcher)
    }
    assert listed == {busy.pk: (3, 6, 1), empty.pk: (0, 0, 0)}
    # The outer query joins none of the counted tables; each count is its own subquery.
    joined = set(campaigns_for_owner(researcher).query.alias_map)
    assert not joined & {"campaigns_original", "candidates_candidate", "quality_aggregatedlabel"}


def test_the_bare_campaigns_url_goes_to_the_campaign_list(client, researcher):
    client.force_login(researcher)
    response = client.get("/campaigns/")
    assert response.status_code == 302 and response["Location"] == "/"


def test_campaign_page_needs_login(client, campaign):
    response = client.get(f"/campaigns/{campaign.id}/")
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


def test_campaign_page_of_another_owner_is_404(client, other_researcher, campaign):
    client.force_login(other_researcher)
    assert client.get(f"/campaigns/{campaign.id}/").status_code == 404


def test_campaign_page_escapes_dataset_text(client, researcher, campaign):
    make_original(campaign, text="<script>alert(1)</script> was great")
    client.force_login(researcher)
    html = client.get(f"/campaigns/{campaign.id}/data/").content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; was great" in html


def test_htmx_pagination_returns_only_the_fragment(client, researcher, campaign):
    for index in range(30):
        make_original(campaign, text=f"Review {index:02d}")
    client.force_login(researcher)
    full = client.get(f"/campaigns/{campaign.id}/data/").content.decode()
    assert "<html" in full and "Page 1 of 2" in full
    fragment = client.get(
        f"/campaigns/{campaign.id}/data/?page=2", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="originals"
    ).content.decode()
    assert "<html" not in fragment
    assert fragment.lstrip().startswith('<div id="originals">')
    assert "Review 29" in fragment and "Page 2 of 2" in fragment


def test_the_originals_old_pages_lead_to_the_data_section(client, researcher, campaign):
    client.force_login(researcher)
    response = client.get(f"/campaigns/{campaign.id}/?page=2")
    assert response.status_code == 302
    assert response["Location"] == f"/campaigns/{campaign.id}/data/?page=2"


def test_the_campaign_header_counts_in_words(client, researcher, campaign):
    campaign.judgments_per_candidate, campaign.rounds_per_assignment = 1, 1
    campaign.save()
    client.force_login(researcher)
    html = " ".join(client.get(f"/campaigns/{campaign.id}/").content.decode().split())
    assert "K = 1 judgment, 1 round + " in html
