"""The quality page's two long lists, workers and decisions, a page at a time.

A campaign of a few thousand workers sent every worker's row (and a form per decision) with
each refresh of the report: 2,000 workers made a 1 MB report every 20 s, 6,000 decisions
a 5 MB block after each click. Each list now shows 50 rows, filtered and searched in the
database, and keeps its page and filters through htmx swaps, posts and reloads.
"""

import re

import pytest
from django.urls import reverse

from cfannotate.quality.forms import VERDICT_NAMES
from cfannotate.quality.models import DecisionState, WorkerDecision
from cfannotate.quality.selectors import VERDICT_FILTERS
from cfannotate.quality.views import DECISIONS_PER_PAGE, WORKERS_PER_PAGE
from tests.factories import make_campaign, make_user
from tests.quality.conftest import make_crowd

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
TO = "\u2013"  # the en dash between the first and last row of a page


def _worker_rows(html: str) -> list[str]:
    block = html.split('<div id="quality-workers"', 1)[1].split('aria-labelledby="decisions-', 1)[0]
    return re.findall(r"<td><code>(crowd-\d+)</code>", block)


def _decision_rows(html: str) -> list[str]:
    return re.findall(r'<tr id="decision-\d+">\s*<td><code>(crowd-\d+)</code>', html)


@pytest.fixture
def owner_client(client, researcher):
    client.force_login(researcher)
    return client


def test_the_verdicts_the_filter_offers_are_the_ones_it_can_select():
    assert VERDICT_NAMES.keys() == VERDICT_FILTERS.keys()


def test_the_page_shows_a_page_of_workers_and_of_decisions(owner_client, researcher):
    campaign = make_crowd(researcher, 160)
    url = reverse("quality-page", args=[campaign.id])
    html = owner_client.get(url).content.decode()
    shown = _worker_rows(html)
    assert len(shown) == WORKERS_PER_PAGE
    assert f"Workers, filtered ones first · 1{TO}50 of 160" in html
    assert shown[0] == "crowd-0009"  # filtered first, the furthest label distribution first
    assert len(_decision_rows(html)) == DECISIONS_PER_PAGE
    assert re.search(r"54 decisions:\s+54 proposed by the filters</p>", html)
    assert "Confirm all 54 proposals" in html  # the whole campaign's, not the page's

    last = owner_client.get(url, {"workers-page": "4", "decisions-page": "2"}).content.decode()
    assert len(_worker_rows(last)) == 10 and f"151{TO}160 of 160" in last
    assert len(_decision_rows(last)) == 4
    # Each list's page links keep the other list where it is.
    assert 'href="?decisions-page=2&amp;workers-page=3#workers-heading"' in last
    assert 'href="?workers-page=4&amp;decisions-page=1#decisions-heading"' in last
    # Every worker is on one page and one only.
    pages = [
        _worker_rows(owner_client.get(url, {"workers-page": str(n)}).content.decode())
        for n in range(1, 5)
    ]
    assert sorted(name for page in pages for name in page) == [f"crowd-{n:04}" for n in range(160)]


def test_workers_are_filtered_by_verdict_and_searched_by_id(owner_client, researcher):
    campaign = make_crowd(researcher, 160)
    url = reverse("quality-page", args=[campaign.id])
    filtered = owner_client.get(url, {"workers-verdict": "filtered"}).content.decode()
    assert f"1{TO}50 of 54" in filtered
    assert set(_worker_rows(filtered)) < {f"crowd-{n:04}" for n in range(0, 160, 3)}
    working = owner_client.get(url, {"workers-verdict": "working"}).content.decode()
    assert f"1{TO}32 of 32" in working
    assert set(_worker_rows(working)) == {f"crowd-{n:04}" for n in range(0, 160, 5)}
    found = owner_client.get(url, {"workers-q": "CROWD-015"}).content.decode()
    assert sorted(_worker_rows(found)) == [f"crowd-015{n}" for n in range(10)]
    none = owner_client.get(url, {"workers-q": "nobody"}).content.decode()
    assert _worker_rows(none) == [] and "No worker matches these filters." in none


def test_decisions_are_filtered_by_state_and_action_and_searched(owner_client, researcher):
    campaign = make_crowd(researcher, 160)
    WorkerDecision.objects.filter(campaign=campaign, worker__external_id="crowd-0003").update(
        state=DecisionState.CONFIRMED
    )
    url = reverse("quality-page", args=[campaign.id])
    confirmed = owner_client.get(url, {"decisions-state": "confirmed"}).content.decode()
    assert _decision_rows(confirmed) == ["crowd-0003"]
    counts = " ".join(confirmed.split('id="decision-counts">', 1)[1].split("</p>", 1)[0].split())
    assert counts == "54 decisions: 53 proposed by the filters · 1 confirmed, to be sent"
    assert "Send confirmed decisions (1)" in confirmed
    approvals = owner_client.get(url, {"decisions-action": "approve"}).content.decode()
    assert _decision_rows(approvals) == [] and "No decision matches these filters." in approvals
    found = owner_client.get(url, {"decisions-q": "crowd-015"}).content.decode()
    assert _decision_rows(found) == ["crowd-0150", "crowd-0153", "crowd-0156", "crowd-0159"]


@pytest.mark.parametrize(
    "bad",
    [
        {"workers-verdict": "everyone"},
        {"decisions-state": "sent"},
        {"decisions-action": "fire"},
        {"workers-q": "x" * 201},
    ],
)
def test_a_bad_filter_is_refused_and_says_why(owner_client, researcher, bad):
    campaign = make_crowd(researcher, 5)
    response = owner_client.get(reverse("quality-page", args=[campaign.id]), bad)
    html = response.content.decode()
    assert response.status_code == 400
    assert "Some filters are invalid." in html and 'role="alert"' in html
    assert "Workers against the C.2 thresholds" in html  # the rest of the page is there


def test_a_page_number_is_read_strictly(owner_client, researcher):
    campaign = make_crowd(researcher, 120)
    url = reverse("quality-page", args=[campaign.id])
    for asked, number in [("1_0", 1), ("\u0662", 1), ("x", 1), ("2", 2), ("99", 3)]:
        html = owner_client.get(url, {"workers-page": asked}).content.decode()
        assert f"Page {number} of 3" in html, asked


def test_htmx_swaps_one_list_and_says_what_it_found(owner_client, researcher):
    campaign = make_crowd(researcher, 120)
    url = reverse("quality-page", args=[campaign.id])
    block = owner_client.get(
        url,
        {"workers-verdict": "filtered"},
        headers={**HTMX, "HX-Target": "quality-workers", "HX-Trigger": "workers-filters"},
    ).content.decode()
    assert block.lstrip().startswith('<div id="quality-workers"')
    assert "<h1>" not in block and "Workers against" not in block
    assert '<p id="workers-status" hx-swap-oob="innerHTML">40 workers match' in block
    # It asks for the same list again when the report changes (its page and filters kept).
    assert f'hx-get="{url}?workers-verdict=filtered"' in block
    # The report's refresh swaps it without a word.
    refreshed = owner_client.get(
        url,
        {"workers-verdict": "filtered"},
        headers={**HTMX, "HX-Target": "quality-workers", "HX-Trigger": "quality-workers"},
    ).content.decode()
    assert "workers-status" not in refreshed
    report = owner_client.get(reverse("quality-report", args=[campaign.id]), headers=HTMX)
    assert report["HX-Trigger"] == "workers-changed"
    assert "crowd-0001</code>" not in report.content.decode()  # no worker table in it

    decisions = owner_client.get(
        url, {"decisions-page": "2"}, headers={**HTMX, "HX-Target": "decisions"}
    ).content.decode()
    assert decisions.lstrip().startswith('<div id="decisions"')
    # 40 blocks: a page past the end is the last one, and the line says which.
    assert (
        len(_decision_rows(decisions)) == 40 and "40 decisions in all · page 1 of 1." in decisions
    )
    assert "Workers against" not in decisions


def test_a_change_on_a_later_page_comes_back_on_that_page(owner_client, researcher):
    """The confirmed row leaves the page (confirmed ones sort first) and the line says so."""
    campaign = make_crowd(researcher, 160)
    later = WorkerDecision.objects.get(campaign=campaign, worker__external_id="crowd-0159")
    update = reverse("quality-decision-update", args=[campaign.id, later.id])
    assert "crowd-0159" in _decision_rows(
        owner_client.get(
            reverse("quality-page", args=[campaign.id]), {"decisions-page": "2"}
        ).content.decode()
    )
    done = owner_client.post(
        f"{update}?decisions-page=2",
        {"state": "confirmed", "reason": "Spam."},
        headers=HTMX,
    )
    html = done.content.decode()
    assert done.status_code == 200
    assert "Page 2 of 2" in html and "crowd-0156" in _decision_rows(html)
    assert "crowd-0159" not in _decision_rows(html)
    assert "crowd-0159: Confirmed, to be sent." in html
    # The page's status line says it (the block is no live region).
    assert re.search(
        r'<p id="decisions-status" hx-swap-oob="innerHTML">crowd-0159: Confirmed', html
    )
    assert "aria-live" not in html.split('id="decisions"', 1)[1].split(">", 1)[0]
    # The forms of that page post with its page, so the next change comes back there too.
    first = _decision_rows(html)[0]
    first_id = WorkerDecision.objects.get(campaign=campaign, worker__external_id=first).id
    next_update = reverse("quality-decision-update", args=[campaign.id, first_id])
    assert f'hx-post="{next_update}?decisions-page=2"' in html
    later.refresh_from_db()
    assert later.state == DecisionState.CONFIRMED


def test_confirm_all_confirms_every_page(owner_client, researcher):
    campaign = make_crowd(researcher, 160)
    confirm = reverse("quality-decisions-confirm", args=[campaign.id])
    html = owner_client.post(f"{confirm}?decisions-page=2", headers=HTMX).content.decode()
    assert "54 proposals confirmed." in html
    assert WorkerDecision.objects.filter(campaign=campaign, state="confirmed").count() == 54
    assert "Confirm all" not in html and "Send confirmed decisions (54)" in html


def test_a_plain_get_of_the_decisions_block_keeps_its_page(owner_client, researcher):
    campaign = make_crowd(researcher, 160)
    response = owner_client.get(
        reverse("quality-decisions", args=[campaign.id]), {"decisions-page": "2"}
    )
    assert response.status_code == 302
    assert response["Location"] == (
        reverse("quality-page", args=[campaign.id]) + "?decisions-page=2"
    )


def test_the_api_lists_workers_a_page_at_a_time_with_the_pages_filters(api_client, researcher):
    campaign = make_crowd(researcher, 160)
    url = reverse("api-quality-workers", args=[campaign.id])
    first = api_client.get(url).json()
    assert first["count"] == 160 and len(first["results"]) == 50
    assert first["results"][0]["worker"] == "crowd-0009"  # the page's order
    assert set(first["results"][0]) >= {"worker", "qualified", "reasons", "label_counts"}
    filtered = api_client.get(url, {"verdict": "filtered", "search": "CROWD-00"}).json()
    assert sorted(row["worker"] for row in filtered["results"]) == [
        f"crowd-{n:04}" for n in range(0, 100, 3)
    ]
    bad = api_client.get(url, {"verdict": "everyone"})
    assert bad.status_code == 400 and "verdict" in bad.json()["fields"]
    too_long = api_client.get(url, {"search": "x" * 201})
    assert too_long.status_code == 400 and "search" in too_long.json()["fields"]
    assert api_client.get(url, {"page": "1_0"}).status_code == 404
    other = make_campaign(owner=make_user("olga"))
    assert api_client.get(reverse("api-quality-workers", args=[other.id])).status_code == 404


def test_the_api_filters_decisions_as_the_page_does(api_client, researcher):
    campaign = make_crowd(researcher, 160)
    url = reverse("api-decision-list", args=[campaign.id])
    assert api_client.get(url).json()["count"] == 54
    found = api_client.get(url, {"action": "block", "search": "crowd-015"}).json()
    assert [row["worker"] for row in found["results"]] == [
        "crowd-0150",
        "crowd-0153",
        "crowd-0156",
        "crowd-0159",
    ]
    assert api_client.get(url, {"action": "approve"}).json()["count"] == 0
    for bad in ({"action": "fire"}, {"state": "sent"}, {"search": "x" * 201}):
        response = api_client.get(url, bad)
        assert response.status_code == 400 and set(bad) <= set(response.json()["fields"])
