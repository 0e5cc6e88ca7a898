"""Every researcher page stays within a fixed number of queries (issue 24, item 4).

On the demo's labeled example (`demo_labeled_example`: fixture originals, hand-written
counterfactuals, a simulated crowd and quality control, as `manage.py demo_setup`
builds it) each page answers 200 within its budget. On a campaign built twice, the
second time with three times the units and workers, each page makes as many queries
as on the small one: a query per row (an N+1) fails here. `bench/pages.py` times the
same pages.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from bench.pages import request_headers
from bench.pages import researcher_pages as bench_pages
from cfannotate.campaigns.models import Campaign
from cfannotate.demo.setup import demo_labeled_example
from cfannotate.quality.services import quality_refresh
from tests.factories import make_labeling_campaign
from tests.quality.conftest import work

pytestmark = pytest.mark.django_db

# Page -> most queries it may make (the session and user lookups included).
BUDGETS = {
    "home": 4,
    "campaign-new": 3,
    "campaign-detail": 14,
    "campaign-data": 7,
    "campaign-generation": 12,
    "campaign-labeling": 7,
    "campaign-exports": 6,
    "campaign-settings": 5,
    "original-upload": 4,
    "run-progress": 8,
    "candidate-import": 5,
    "candidate-review": 11,  # a page of ids, then its rows (core.pagination): any depth
    "candidate-row": 6,
    "candidate-edit": 6,
    "labeling-block": 7,
    "gold-page": 10,  # and the sizes of units and gold rounds, for the size note
    "gold-original": 8,
    "crowd-platforms": 12,
    "quality-page": 25,  # with a page of each of its two lists, each counted
    "quality-report": 24,
    "quality-decisions": 6,  # a page of them, and all of them counted by state
    "evaluation-fragment": 7,
    "api-token": 4,
}
PAGES_OF_A_ROW = ("candidate-row", "candidate-edit", "gold-original")


def researcher_pages(campaign: Campaign) -> dict[str, str]:
    """Every researcher page of `campaign`, by route name (fragments loaded without htmx)."""
    candidate = campaign.candidates.order_by("id").first()
    by_id = {"campaign_id": campaign.id}
    on_candidate = {**by_id, "candidate_id": candidate.id}
    pages = {name: reverse(name) for name in ("home", "campaign-new", "api-token")}
    pages |= {
        name: reverse(name, kwargs=by_id)
        for name in BUDGETS
        if name not in pages and name not in PAGES_OF_A_ROW
    }
    pages["candidate-row"] = reverse("candidate-row", kwargs=on_candidate)
    pages["candidate-edit"] = reverse("candidate-edit", kwargs=on_candidate)
    on_original = {**by_id, "original_id": candidate.original_id}
    pages["gold-original"] = reverse("gold-original", kwargs=on_original)
    return pages


def _queries(client, name: str, url: str) -> int:
    headers = request_headers(name)  # a block as its page loads it
    client.get(
        url, headers=headers
    )  # per-process caches (round contents, catalogs) are not the page's cost
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, headers=headers)
    assert response.status_code == 200, (url, response.status_code)
    return len(queries)


@pytest.mark.slow  # the demo imports its counterfactuals, which parses them with spaCy
def test_every_researcher_page_keeps_its_budget_on_the_demo_data(client, researcher):
    example = demo_labeled_example(owner=researcher)
    client.force_login(researcher)
    pages = researcher_pages(example)
    assert bench_pages() == pages  # the benchmark times the pages counted here
    over = {}
    for name, url in pages.items():
        count = _queries(client, name, url)
        if count > BUDGETS[name]:
            over[name] = f"{count} queries, budget {BUDGETS[name]}"
    assert not over, over


def _labeled(owner, *, units: int, workers: int) -> Campaign:
    campaign = make_labeling_campaign(
        units=units, gold=2, training=1, rounds_per_assignment=2, gold_rounds_per_assignment=1
    )
    Campaign.objects.filter(pk=campaign.pk).update(owner=owner)
    for number in range(workers):
        work(campaign, seconds=30 if number % 2 else 5, real=lambda _: (True, "negative"))
    quality_refresh(campaign=campaign)
    return campaign


def test_no_page_makes_a_query_per_row(client, researcher):
    client.force_login(researcher)
    small = _labeled(researcher, units=3, workers=2)
    large = _labeled(researcher, units=9, workers=6)
    counts = {
        name: (_queries(client, name, url), _queries(client, name, researcher_pages(large)[name]))
        for name, url in researcher_pages(small).items()
    }
    grows = {name: pair for name, pair in counts.items() if pair[1] > pair[0]}
    assert not grows, f"queries (small campaign, 3x larger): {grows}"
