"""The campaign's sections: each its own page, with the section navigation on every page."""

import re

import pytest
from django.urls import reverse

from cfannotate.campaigns.sections import SECTIONS, section_of_route
from tests.factories import make_campaign, make_original

pytestmark = pytest.mark.django_db

# Section page -> ids of the blocks it shows (fragments of the apps that do the work).
SECTION_PAGES = {
    "campaign-data": ['id="original-upload"', 'id="originals"', 'id="labels-heading"'],
    "campaign-generation": [
        'id="generation-progress"',
        'id="recent-candidates"',
        'id="candidate-import"',
    ],
    "campaign-labeling": ['id="labeling-block"', 'id="labeling-order"', 'id="platforms-block"'],
    "campaign-exports": ['id="exports"', 'id="evaluation"'],
}
# Every page of a campaign, by route name -> the section its navigation marks.
CAMPAIGN_PAGES = {
    "campaign-detail": "Overview",
    "campaign-data": "Data",
    "campaign-generation": "Generation",
    "candidate-review": "Review",
    "gold-page": "Gold and training",
    "campaign-labeling": "Labeling and platforms",
    "crowd-platforms": "Labeling and platforms",
    "quality-page": "Quality",
    "campaign-exports": "Exports",
    "campaign-settings": "Settings",
}


def _current(html: str) -> list[str]:
    start = html.index('aria-label="Campaign sections"')
    nav = html[start : html.index("</nav>", start)]
    return re.findall(r'aria-current="page">([^<]+)</a>', nav)


@pytest.mark.parametrize(("name", "blocks"), SECTION_PAGES.items())
def test_a_section_page_shows_its_blocks_to_the_owner(client, researcher, campaign, name, blocks):
    client.force_login(researcher)
    response = client.get(reverse(name, args=[campaign.id]))
    assert response.status_code == 200
    html = response.content.decode()
    for block in blocks:
        assert block in html, (name, block)


@pytest.mark.parametrize("name", [*SECTION_PAGES, "campaign-detail"])
def test_a_section_page_is_a_404_for_anyone_else(client, other_researcher, campaign, name):
    client.force_login(other_researcher)
    response = client.get(reverse(name, args=[campaign.id]))
    assert response.status_code == 404 and "Reviews" not in response.content.decode()


@pytest.mark.parametrize(("name", "title"), CAMPAIGN_PAGES.items())
def test_every_page_of_a_campaign_marks_its_own_section(client, researcher, campaign, name, title):
    client.force_login(researcher)
    html = client.get(reverse(name, args=[campaign.id])).content.decode()
    assert _current(html) == [title]
    for section in SECTIONS:  # every section is one click away
        assert f'href="{reverse(section.url_name, args=[campaign.id])}"' in html


def test_pages_outside_a_campaign_have_no_section_navigation(client, researcher, campaign):
    client.force_login(researcher)
    for url in (reverse("home"), reverse("campaign-new"), reverse("api-token")):
        assert "Campaign sections" not in client.get(url).content.decode()


def test_a_fragment_has_no_section_navigation(client, researcher, campaign):
    client.force_login(researcher)
    url = reverse("run-progress", args=[campaign.id])
    assert "Campaign sections" not in client.get(url, HTTP_HX_REQUEST="true").content.decode()


def test_each_route_of_a_campaign_is_in_a_section():
    assert section_of_route("candidate-edit") == "review"
    assert section_of_route("gold-original") == "gold"
    assert section_of_route("candidate-import") == "generation"
    assert section_of_route("original-upload-preview") == "data"
    assert section_of_route("evaluation-fragment") == "exports"
    assert section_of_route("home") is None and section_of_route(None) is None


def test_a_new_campaign_overview_says_to_upload_and_links_the_data_section(client, researcher):
    campaign = make_campaign(owner=researcher, name="Fresh")
    client.force_login(researcher)
    html = client.get(reverse("campaign-detail", args=[campaign.id])).content.decode()
    assert "Upload the originals" in html
    assert f'<a class="button" href="{reverse("campaign-data", args=[campaign.id])}">' in html
    assert "Go to data" in html


def test_the_overview_points_at_generation_once_there_are_originals(client, researcher):
    campaign = make_campaign(owner=researcher, name="Uploaded")
    make_original(campaign)
    client.force_login(researcher)
    html = client.get(reverse("campaign-detail", args=[campaign.id])).content.decode()
    assert "Generate candidates, or import your own." in html
    assert f'href="{reverse("campaign-generation", args=[campaign.id])}">Go to generation' in html
    assert "1 original</span>" in html or "1 original" in html
    assert 'id="original-upload"' not in html  # the heavy blocks live in their sections


def test_the_generation_page_names_the_generators_a_run_uses(client, researcher):
    campaign = make_campaign(owner=researcher, name="Causal")
    client.force_login(researcher)
    url = reverse("campaign-generation", args=[campaign.id])
    assert "A run uses 1 generator: <code>polyjuice</code>" in client.get(url).content.decode()
    campaign.generators = [{"name": "polyjuice"}, {"name": "causal-negation"}]
    campaign.save(update_fields=["generators"])
    html = client.get(url).content.decode()
    assert "A run uses 2 generators: <code>polyjuice</code>, <code>causal-negation</code>" in html
    assert f'<a href="{reverse("campaign-settings", args=[campaign.id])}">change</a>' in html
