"""The quality page's worker table and decisions of a large crowd, in a real browser: a
filter and a page link swap one list (htmx), say what they found in the page's status
line, and push the address, so a reload keeps both lists where they were; a change made on
a later page of decisions comes back on that page."""

import re

import pytest
from playwright.sync_api import expect

from cfannotate.quality.models import DecisionState, WorkerDecision
from tests.browser.conftest import htmx_ready, log_in
from tests.factories import make_user
from tests.quality.conftest import make_crowd

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
TO = "\u2013"


def test_a_researcher_filters_workers_and_works_through_pages_of_decisions(live_server, page):
    researcher = make_user("nadia")
    campaign = make_crowd(researcher, 160)  # 54 filtered workers, a block proposed for each
    quality = f"{live_server.url}/campaigns/{campaign.id}/quality/"
    swaps = []  # the worker table's requests
    page.on(
        "request",
        lambda request: (
            request.headers.get("hx-target") == "quality-workers" and swaps.append(request.url)
        ),
    )
    log_in(page, live_server.url, "nadia")
    page.goto(quality)
    htmx_ready(page)
    workers = page.locator("#quality-workers")
    expect(workers.locator("caption")).to_contain_text(f"1{TO}50 of 160")

    # A verdict chosen: the table alone is swapped, the line says what it found.
    page.get_by_label("Verdict").select_option("working")
    expect(workers.locator("caption")).to_contain_text(f"1{TO}32 of 32")
    expect(page.locator("#workers-status")).to_have_text("32 workers match · page 1 of 1.")
    assert "workers-verdict=working" in page.url
    # A search, as it is typed.
    page.locator("#workers-filters").get_by_label("Worker id contains").fill("crowd-001")
    expect(page.locator("#workers-status")).to_have_text("2 workers match · page 1 of 1.")
    expect(workers.get_by_role("row")).to_have_count(3)  # the header and crowd-0010, -0015
    # Leaving the search box asks nothing again (its change event raced other clicks).
    asked = len(swaps)
    page.get_by_role("heading", name="Worker decisions").click()
    page.wait_for_timeout(600)
    assert len(swaps) == asked

    # The decisions' second page, and a change made there.
    decisions = page.locator("#decisions")
    decisions.get_by_role("link", name="Next").click()
    expect(decisions.get_by_text("Page 2 of 2")).to_be_visible()
    expect(page.locator("#decisions-status")).to_have_text("54 decisions in all · page 2 of 2.")
    row = decisions.locator("tbody tr").first
    worker = row.locator("code").first.inner_text()
    row.get_by_role("button", name="Confirm").click()
    expect(page.locator("#decisions-status")).to_contain_text(f"{worker}: Confirmed, to be sent.")
    expect(decisions.get_by_text("Page 2 of 2")).to_be_visible()  # still on page 2
    assert (
        WorkerDecision.objects.get(campaign=campaign, worker__external_id=worker).state
        == DecisionState.CONFIRMED
    )
    expect(decisions.locator("#decision-counts")).to_contain_text("1 confirmed, to be sent")
    # The decisions' own filters: the confirmed one alone.
    page.locator("#decisions-filters").get_by_label("State").select_option("confirmed")
    expect(page.locator("#decisions-status")).to_have_text("1 decision matches · page 1 of 1.")
    expect(decisions.locator("tbody tr")).to_have_count(1)
    page.locator("#decisions-filters").get_by_label("State").select_option("")
    expect(decisions.get_by_text("Page 1 of 2")).to_be_visible()
    decisions.get_by_role("link", name="Next").click()
    expect(decisions.get_by_text("Page 2 of 2")).to_be_visible()

    # The address holds both lists: a reload (or a shared link) shows them as they were.
    assert re.search(r"decisions-page=2", page.url) and "workers-q=crowd-001" in page.url
    page.reload()
    htmx_ready(page)
    expect(workers.get_by_role("row")).to_have_count(3)
    expect(page.get_by_label("Verdict")).to_have_value("working")
    expect(decisions.get_by_text("Page 2 of 2")).to_be_visible()
    assert page.console_errors == []
