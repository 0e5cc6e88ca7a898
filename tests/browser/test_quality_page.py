"""The quality page in a real browser: charts drawn, a decision confirmed through htmx."""

import pytest

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
    page.get_by_text("1 decision sent to the platforms").wait_for()
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
