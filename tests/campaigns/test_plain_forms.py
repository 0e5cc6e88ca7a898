"""Researcher controls without htmx (`campaigns/plain_forms.py`): every htmx post is also a
plain form, done answers redirect back with the block's messages, refusals show the block
in its section's page with what was typed."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.messages import get_messages
from django.urls import URLResolver, get_resolver, reverse

from cfannotate.campaigns.models import CampaignStatus
from cfannotate.campaigns.sections import SECTIONS
from cfannotate.candidates.models import Candidate, CandidateStatus
from tests.factories import make_campaign, make_candidate, make_original, make_unit

TEMPLATES = Path(settings.BASE_DIR) / "templates"
HX_POST = re.compile(r"<(\w+)\b([^>]*\bhx-post=\"([^\"]*)\"[^>]*)>", re.S)


def _hx_posts_without_a_plain_form(text: str) -> list[str]:
    """Each element with hx-post must be a `<form method="post" action=…>` of the same URL,
    sit inside such a form (a fieldset that saves as you type), or be a button with a
    `formaction`."""
    missing = []
    for match in HX_POST.finditer(text):
        tag, attributes, url = match.groups()
        if tag == "form":
            if 'method="post"' in attributes and f'action="{url}"' in attributes:
                continue
        elif "formaction=" in attributes:
            continue
        else:
            before = text[: match.start()]
            opened, closed = before.rfind("<form"), before.rfind("</form>")
            if opened > closed and 'method="post"' in before[opened : before.find(">", opened)]:
                continue
        line = text[: match.start()].count("\n") + 1
        missing.append(f'line {line}: <{tag} hx-post="{url}">')
    return missing


def _templates_failing(check) -> dict[str, list[str]]:
    """Each template in which `check` finds something, with what it found."""
    return {
        str(path.relative_to(TEMPLATES)): problems
        for path in sorted(TEMPLATES.rglob("*.html"))
        if (problems := check(path.read_text(encoding="utf-8")))
    }


def test_every_htmx_post_in_the_templates_is_also_a_plain_form():
    assert _templates_failing(_hx_posts_without_a_plain_form) == {}


HX_GET_CONTROL = re.compile(r"<(a|button)\b([^>]*\bhx-get=\"[^\"]*\"[^>]*)>", re.S)


def _hx_get_controls_without_a_link(text: str) -> list[str]:
    """A link or button that htmx fetches with must be a link to a page too (`href`)."""
    return [
        f"line {text[: match.start()].count(chr(10)) + 1}: <{match.group(1)}>"
        for match in HX_GET_CONTROL.finditer(text)
        if match.group(1) == "button" or "href=" not in match.group(2)
    ]


def test_every_htmx_fetch_a_researcher_clicks_is_also_a_link():
    assert _templates_failing(_hx_get_controls_without_a_link) == {}
    assert _hx_get_controls_without_a_link('<button hx-get="/row/">Cancel</button>') == [
        "line 1: <button>"
    ]
    assert _hx_get_controls_without_a_link('<a hx-get="/row/">Edit</a>') == ["line 1: <a>"]
    assert _hx_get_controls_without_a_link('<a href="/edit/" hx-get="/edit/">Edit</a>') == []


def test_the_template_check_finds_a_bare_htmx_button():
    bare = '<button class="button" hx-post="/x/" hx-target="#y">Go</button>'
    other_url = '<form method="post" action="/y/" hx-post="/x/"><button>Go</button></form>'
    assert _hx_posts_without_a_plain_form(bare) == ['line 1: <button hx-post="/x/">']
    assert _hx_posts_without_a_plain_form(other_url) == ['line 1: <form hx-post="/x/">']
    inside = '<form method="post" action="/x/"><fieldset hx-post="/x/save/"></fieldset></form>'
    assert _hx_posts_without_a_plain_form(inside) == []


pytestmark = pytest.mark.django_db


def _messages(response) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request)]


def test_opening_by_a_plain_post_goes_back_to_the_page_with_the_warnings(logged_in, campaign):
    make_unit(make_original(campaign))
    page = reverse("campaign-labeling", args=[campaign.id])
    response = logged_in.post(
        reverse("labeling-open", args=[campaign.id]), HTTP_REFERER=f"http://testserver{page}"
    )
    assert response.status_code == 303 and response["Location"] == f"http://testserver{page}"
    assert any("Fewer active gold rounds" in message for message in _messages(response))
    campaign.refresh_from_db()
    assert campaign.status == CampaignStatus.LABELING
    shown = logged_in.get(page).content.decode()
    assert "Fewer active gold rounds" in shown and "Pause labeling" in shown


def test_only_a_referer_that_is_a_page_of_this_campaign_is_followed(
    logged_in, campaign, researcher
):
    make_unit(make_original(campaign))
    section = reverse("campaign-labeling", args=[campaign.id])
    url = reverse("labeling-open", args=[campaign.id])
    away = logged_in.post(url, HTTP_REFERER="https://evil.example/phish")
    assert away.status_code == 303 and away["Location"] == section
    # A refused post's page has the URL of its action, which answers POST only.
    after_refusal = logged_in.post(
        reverse("labeling-pause", args=[campaign.id]), HTTP_REFERER=f"http://testserver{url}"
    )
    assert after_refusal["Location"] == section
    other = reverse("quality-page", args=[make_campaign(owner=researcher).id])
    another_campaign = logged_in.post(url, HTTP_REFERER=f"http://testserver{other}")
    assert another_campaign["Location"] == section
    assert logged_in.post(url)["Location"] == section
    overview = f"http://testserver{reverse('campaign-detail', args=[campaign.id])}"
    assert logged_in.post(url, HTTP_REFERER=overview)["Location"] == overview


def test_a_refused_plain_post_is_its_section_page_with_the_error(logged_in, campaign):
    response = logged_in.post(reverse("labeling-open", args=[campaign.id]))
    assert response.status_code == 409
    page = response.content.decode()
    assert "<h1>Labeling and platforms</h1>" in page and 'aria-current="page"' in page
    assert "nothing to label yet" in page
    assert f'href="{reverse("campaign-labeling", args=[campaign.id])}"' in page
    campaign.refresh_from_db()
    assert campaign.status == CampaignStatus.DRAFT


def test_htmx_still_gets_just_the_block(logged_in, campaign):
    make_unit(make_original(campaign))
    response = logged_in.post(reverse("labeling-open", args=[campaign.id]), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert response.content.decode().lstrip().startswith('<div id="labeling-block"')
    assert _messages(response) == []


@pytest.fixture
def reviewed(campaign):
    original = make_original(campaign, text="It is great for kids.", label="positive")
    return [
        make_candidate(original, text="It is not great for kids.", control_code="negation"),
        make_candidate(original, text="It is great for <b>adults</b>.", control_code="lexical"),
    ]


def test_bulk_review_by_a_plain_post_keeps_the_filters(logged_in, campaign, reviewed):
    review = reverse("candidate-review", args=[campaign.id]) + "?control_code=lexical&page=1"
    response = logged_in.post(
        reverse("candidates-bulk", args=[campaign.id]) + "?control_code=lexical",
        {"action": "reject", "ids": [reviewed[1].id]},
        HTTP_REFERER=f"http://testserver{review}",
    )
    assert response.status_code == 303 and response["Location"].endswith(review)
    assert _messages(response) == ["1 candidate rejected."]
    assert Candidate.objects.get(pk=reviewed[1].pk).status == CandidateStatus.REJECTED
    nothing = logged_in.post(reverse("candidates-bulk", args=[campaign.id]), {"action": "accept"})
    assert nothing.status_code == 400
    assert "Tick the candidates to change first." in nothing.content.decode()


def test_editing_a_candidate_without_htmx(logged_in, campaign, reviewed):
    url = reverse("candidate-edit", args=[campaign.id, reviewed[1].id])
    form = logged_in.get(url)
    assert form.status_code == 200
    page = form.content.decode()
    # The row sits in a table of the review section's page, the text escaped.
    assert "<h1>Review</h1>" in page and '<table class="table"><tbody>' in page
    assert "It is great for &lt;b&gt;adults&lt;/b&gt;." in page and "<b>adults" not in page
    assert f'method="post" action="{url}"' in page

    refused = logged_in.post(url, {"text": "   "})
    assert refused.status_code == 400 and 'name="text"' in refused.content.decode()
    assert Candidate.objects.get(pk=reviewed[1].pk).text == "It is great for <b>adults</b>."

    saved = logged_in.post(url, {"text": "It is great for grown-ups."}, HTTP_REFERER=url)
    assert saved.status_code == 303
    assert saved["Location"] == reverse("candidate-review", args=[campaign.id])
    assert Candidate.objects.get(pk=reviewed[1].pk).text == "It is great for grown-ups."


def test_accepting_and_rejecting_a_row_without_htmx(logged_in, campaign, reviewed):
    review = f"http://testserver{reverse('candidate-review', args=[campaign.id])}?status=generated"
    rejected = logged_in.post(
        reverse("candidate-reject", args=[campaign.id, reviewed[0].id]), HTTP_REFERER=review
    )
    assert rejected.status_code == 303 and rejected["Location"] == review
    assert Candidate.objects.get(pk=reviewed[0].pk).status == CandidateStatus.REJECTED
    accepted = logged_in.post(reverse("candidate-accept", args=[campaign.id, reviewed[0].id]))
    assert accepted.status_code == 303
    assert Candidate.objects.get(pk=reviewed[0].pk).status == CandidateStatus.SELECTED


def test_running_quality_control_without_htmx_says_what_it_did(logged_in, campaign):
    response = logged_in.post(reverse("quality-refresh", args=[campaign.id]))
    assert response.status_code == 303
    assert response["Location"] == reverse("quality-page", args=[campaign.id])
    assert [message.split(":")[0] for message in _messages(response)] == ["Quality control ran"]


def test_a_bad_labeling_budget_keeps_the_page_and_says_why(logged_in, campaign):
    response = logged_in.post(reverse("labeling-order", args=[campaign.id]), {"budget": "many"})
    assert response.status_code == 400
    page = response.content.decode()
    assert "whole number" in page and "<h1>Labeling and platforms</h1>" in page


def test_only_the_owner_gets_a_plain_post_through(client, other_researcher, campaign):
    url = reverse("labeling-open", args=[campaign.id])
    assert client.post(url).status_code == 302  # to the login page
    client.force_login(other_researcher)
    assert client.post(url).status_code == 404


def _campaign_routes() -> dict[str, str]:
    """Every route of a campaign that takes the campaign's id and nothing else, by name."""

    def walk(patterns, prefix=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif pattern.name:
                yield prefix + str(pattern.pattern), pattern.name

    return {
        name: route
        for route, name in walk(get_resolver().url_patterns)
        if re.findall(r"<[^>]+>", route) == ["<int:campaign_id>"]
    }


def test_no_url_of_a_campaign_opens_as_a_bare_block(logged_in, campaign, reviewed):
    """A block's URL opened in a tab (typed, bookmarked, from history) is a whole page."""
    sections = {reverse(section.url_name, args=[campaign.id]) for section in SECTIONS}
    routes = _campaign_routes()
    assert {"run-progress", "labeling-block", "quality-report", "original-upload"} <= set(routes)
    bare = {}
    for name in routes:
        url = reverse(name, args=[campaign.id])
        response = logged_in.get(url)
        if response.status_code in (301, 302, 303):
            if response["Location"] not in sections:
                bare[name] = f"redirects to {response['Location']}"
        elif (
            response.status_code == 200
            and "text/html" in response["Content-Type"]
            and "<html" not in response.content.decode()[:300].lower()
        ):
            bare[name] = "a block without the page around it"
    assert bare == {}


@pytest.mark.parametrize(
    ("name", "section"),
    [
        ("run-progress", "campaign-generation"),
        ("candidates-recent", "campaign-generation"),
        ("candidate-import", "campaign-generation"),
        ("original-upload", "campaign-data"),
        ("labeling-block", "campaign-labeling"),
        ("quality-report", "quality-page"),
        ("quality-decisions", "quality-page"),
    ],
)
def test_a_plain_get_of_a_block_goes_to_its_page_and_htmx_gets_the_block(
    logged_in, campaign, name, section
):
    url = reverse(name, args=[campaign.id])
    plain = logged_in.get(url)
    assert plain.status_code == 302 and plain["Location"] == reverse(section, args=[campaign.id])
    block = logged_in.get(url, HTTP_HX_REQUEST="true")
    assert block.status_code == 200 and "<html" not in block.content.decode().lower()
