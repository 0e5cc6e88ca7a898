"""Every id that a researcher page's ARIA attributes name is on that page: a help text or an
error a field's `aria-describedby` points at but that has another id is never read out, and
the field's description is empty. The refused forms are checked too, errors and all."""

from html.parser import HTMLParser

import pytest

from bench.pages import request_headers
from tests.campaigns.test_forms_and_pages import _settings_post
from tests.factories import make_campaign, make_candidate, make_original
from tests.test_page_queries import _labeled, researcher_pages

pytestmark = pytest.mark.django_db

REFERENCES = ("aria-describedby", "aria-labelledby", "aria-controls", "aria-errormessage")


class _References(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.named: list[tuple[str, str, str]] = []  # (tag, attribute, id)

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if attributes.get("id"):
            self.ids.add(attributes["id"])
        for name in REFERENCES:
            for target in (attributes.get(name) or "").split():
                self.named.append((tag, name, target))


def broken_references(html: str) -> list[str]:
    parser = _References()
    parser.feed(html)
    return [
        f"<{tag} {name}={target!r}>"
        for tag, name, target in parser.named
        if target not in parser.ids
    ]


def test_the_check_sees_a_reference_to_nothing():
    assert broken_references('<input aria-describedby="a_helptext"><p id="a_help">') == [
        "<input aria-describedby='a_helptext'>"
    ]
    assert broken_references('<p id="h">Help</p><input aria-describedby="h">') == []


def test_every_reference_of_every_researcher_page_names_an_element_on_it(client, researcher):
    client.force_login(researcher)
    campaign = _labeled(researcher, units=3, workers=2)
    broken = {}
    for name, url in researcher_pages(campaign).items():
        response = client.get(url, headers=request_headers(name))  # a block as htmx loads it
        assert response.status_code == 200, (name, response.status_code)
        if problems := broken_references(response.content.decode()):
            broken[name] = problems
    assert broken == {}


def test_a_refused_new_campaign_links_each_error_to_its_field(client, researcher):
    client.force_login(researcher)
    response = client.post("/campaigns/new/", {"name": "", "task_type": "nonsense"})
    assert response.status_code == 400
    html = response.content.decode()
    assert broken_references(html) == []
    # The name's error and the task group's error are each named by what they describe.
    assert 'aria-describedby="id_name_error"' in html and 'id="id_name_error"' in html
    assert 'aria-describedby="id_task_type_error"' in html and 'id="id_task_type_error"' in html
    # A summary at the top says what to fix, links to each field, and takes the focus.
    summary = html.split('id="error-summary"', 1)[1].split("</div>", 1)[0]
    assert 'href="#id_name"' in summary and 'href="#id_task_type_0"' in summary


def test_refused_settings_link_each_error_to_its_field(client, researcher):
    campaign = make_campaign(owner=researcher)
    client.force_login(researcher)
    response = client.post(
        f"/campaigns/{campaign.id}/settings/",
        _settings_post(campaign, rounds_per_assignment="lots", max_candidates=-1),
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert broken_references(html) == []
    assert 'id="id_rounds_per_assignment_error"' in html
    summary = html.split('id="error-summary"', 1)[1].split("</div>", 1)[0]
    assert 'href="#id_rounds_per_assignment"' in summary


def test_refused_review_filters_link_each_error_to_its_filter(client, researcher):
    campaign = make_campaign(owner=researcher)
    make_candidate(make_original(campaign))
    client.force_login(researcher)
    response = client.get(f"/campaigns/{campaign.id}/candidates/", {"min_fluency": "lots"})
    assert response.status_code == 400
    html = response.content.decode()
    assert 'aria-describedby="id_min_fluency_error"' in html
    assert broken_references(html) == []
