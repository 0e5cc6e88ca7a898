"""The quality page in a real browser: charts drawn, a decision confirmed through htmx."""

import pytest
from playwright.sync_api import expect

from cfannotate.quality.models import DecisionState, WorkerDecision
from cfannotate.quality.services import quality_refresh
from tests.browser.conftest import htmx_ready, log_in
from tests.factories import make_labeling_campaign, make_user
from tests.quality.conftest import work

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_researcher_reads_the_charts_and_confirms_a_decision(live_server, page):
    researcher = make_user("erin")
    campaign = make_labeling_campaign(
        units=6, gold=2, rounds_per_assignment=3, gold_rounds_per_assignment=2
    )
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    work(campaign, seconds=30, real=lambda _: (True, "negative"))
    guesser, _ = work(campaign, seconds=8, gold_right=2, real=lambda _: (True, "positive"))
    quality_refresh(campaign=campaign)

    log_in(page, live_server.url, "erin")
    page.goto(f"{live_server.url}/campaigns/{campaign.id}/")
    sections = page.get_by_role("navigation", name="Campaign sections")
    sections.get_by_role("link", name="Quality", exact=True).click()
    sections.locator('[aria-current="page"]', has_text="Quality").wait_for()
    htmx_ready(page)

    assert page.locator("svg[role=img]").count() == 6
    assert page.get_by_role("img", name="Time per round").is_visible()
    assert page.get_by_role("img", name="Workers against the C.2 thresholds").is_visible()
    # Each chart opens as a table, no script needed (a <details> element).
    page.get_by_text("Workers against the C.2 thresholds as a table").click()
    table = page.get_by_role("table", name="Each worker's median time per round")
    assert table.get_by_role("row", name=guesser.external_id).is_visible()
    assert page.get_by_text("2 of 6 gold counterfactuals right").first.is_visible()

    row = page.locator(f"#decisions tr:has-text('{guesser.external_id}')").filter(has_text="Reject")
    row.get_by_role("button", name="Confirm").click()
    page.locator("#decisions .badge-confirmed").first.wait_for()
    rejection = WorkerDecision.objects.get(worker=guesser, action="reject")
    assert rejection.state == DecisionState.CONFIRMED and not rejection.proposed_by_filters

    page.get_by_role("button", name="Run quality control now").click()
    page.get_by_text("Quality control ran: 1 of 2 workers qualified").wait_for()
    # The report was swapped anew; the table the researcher opened is still open in it.
    assert page.get_by_role("table", name="Each worker's median time per round").is_visible()

    # Sending to the platforms asks first (htmx's confirm on the form); no, then yes.
    asked = []

    def answer(dialog, accept):
        asked.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    page.once("dialog", lambda dialog: answer(dialog, accept=False))
    page.get_by_role("button", name="Send confirmed decisions").click()
    page.once("dialog", lambda dialog: answer(dialog, accept=True))
    page.get_by_role("button", name="Send confirmed decisions").click()
    page.locator("#decisions .notice", has_text="1 decision sent to the platforms").wait_for()
    # The page's status line says it too (the decisions block is no live region).
    expect(page.locator("#decisions-status")).to_contain_text("1 decision sent to the platforms.")
    assert asked == ["Send every confirmed decision to the workers' platforms?"] * 2
    assert WorkerDecision.objects.get(pk=rejection.pk).state == DecisionState.APPLIED
    assert page.console_errors == []


def test_a_refused_change_shows_its_message(live_server, page):
    researcher = make_user("frank")
    campaign = make_labeling_campaign(
        units=3, gold=2, rounds_per_assignment=3, gold_rounds_per_assignment=2
    )
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    work(campaign, seconds=30, real=lambda _: (True, "negative"))
    quality_refresh(campaign=campaign)

    log_in(page, live_server.url, "frank")
    page.goto(f"{live_server.url}/campaigns/{campaign.id}/quality/")
    form = page.locator("#decisions form").first
    form.locator("select[name=action]").select_option("reject")
    form.get_by_role("button", name="Confirm").click()
    # The 400 fragment is swapped in: the researcher reads why, nothing changed.
    page.get_by_role("alert").filter(has_text="Say why you reject this assignment.").wait_for()
    assert WorkerDecision.objects.get(campaign=campaign).state == DecisionState.PROPOSED


def test_the_report_refresh_keeps_the_focus_and_can_be_paused(live_server, page):
    """The report refreshes every 20 s while the campaign is labeling: the focus stays on
    the control it was on (it fell to <body>), a status line says when the report changed,
    and a box pauses the refresh, remembered in this browser. A poll is what htmx sends on
    the report's own trigger, sent here at once through htmx.ajax from the report."""
    researcher = make_user("jules")
    campaign = make_labeling_campaign(
        units=6, gold=2, rounds_per_assignment=3, gold_rounds_per_assignment=2
    )
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    work(campaign, seconds=30, real=lambda _: (True, "negative"))
    quality_refresh(campaign=campaign)
    report_url = f"/campaigns/{campaign.id}/quality/report/"
    polls = []
    page.on("request", lambda request: report_url in request.url and polls.append(request.url))

    def poll():
        page.evaluate(
            "(url) => htmx.ajax('GET', url,"
            " {source: '#quality-report', target: '#quality-report', swap: 'outerHTML'})",
            report_url,
        )

    log_in(page, live_server.url, "jules")
    page.goto(f"{live_server.url}/campaigns/{campaign.id}/quality/")
    htmx_ready(page)
    assert page.locator("#quality-report").get_attribute("aria-live") is None
    auto_refresh = page.get_by_role("checkbox", name="Auto-refresh every 20 seconds")
    expect(auto_refresh).to_be_checked()

    summary = page.get_by_text("Time per round as a table")
    summary.click()
    expect(summary).to_be_focused()
    work(campaign, seconds=8, gold_right=2, real=lambda _: (True, "positive"))
    quality_refresh(campaign=campaign)  # the next poll brings a changed report
    poll()
    expect(page.get_by_role("status").filter(has_text="Report updated")).to_have_count(1)
    assert len(polls) == 1
    expect(summary).to_be_focused()
    assert summary.locator("xpath=..").get_attribute("open") is not None  # keep_open.js

    # Paused, and still paused on the next visit: no poll is sent.
    auto_refresh.uncheck()
    page.reload()
    htmx_ready(page)
    expect(auto_refresh).not_to_be_checked()
    poll()
    page.wait_for_timeout(300)
    assert len(polls) == 1
    # "Run quality control now" still runs, and says what it did in the status line.
    page.get_by_role("button", name="Run quality control now").click()
    expect(page.get_by_role("status").filter(has_text="Quality control ran")).to_have_count(1)
    expect(page.get_by_role("button", name="Run quality control now")).to_be_focused()
    assert page.console_errors == []
