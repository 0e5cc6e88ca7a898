"""Prolific places in a real browser: the shortfall said, places added in one click, the cap
for the labeling sweep saved, and a refused number kept in its field."""

import pytest

from cfannotate.crowd.publishing import prolific_study_create
from tests.browser.conftest import htmx_ready, log_in
from tests.crowd.test_prolific import _options
from tests.factories import make_labeling_campaign, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_researcher_adds_places_and_sets_the_cap(live_server, page, prolific):
    researcher = make_user("pilar")
    campaign = make_labeling_campaign(units=4, gold=1, rounds_per_assignment=2)
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    study = prolific_study_create(
        campaign=campaign, options=_options(places=1), base_url="https://labels.example.org"
    )
    log_in(page, live_server.url, "pilar")
    page.goto(f"{live_server.url}/campaigns/{campaign.id}/platforms/")
    htmx_ready(page)
    notice = page.locator("#places-short")
    assert "add 3 to study" in notice.inner_text()
    assert page.input_value(f"#places-{study.id}") == "3"  # the shortfall, filled in

    page.get_by_role("button", name="Add", exact=True).click()
    page.get_by_text(f"Prolific study {study.external_id} now lets 4 workers in.").wait_for()
    assert page.locator("#places-short").count() == 0
    assert prolific.studies[study.external_id]["total_available_places"] == 4

    page.fill(f"#places-cap-{study.id}", "2")  # below the study's places: refused, kept
    page.get_by_role("button", name="Save").click()
    page.locator("#platform-error").wait_for()
    assert "Cap the study at 4 to 100000 places" in page.locator("#platform-error").inner_text()
    assert page.input_value(f"#places-cap-{study.id}") == "2"
    page.fill(f"#places-cap-{study.id}", "20")
    page.get_by_role("button", name="Save").click()
    page.get_by_text("takes more places by itself as the units need them, up to 20").wait_for()
    assert page.input_value(f"#places-cap-{study.id}") == "20"
    # The one console error is the refused cap's 400, which the page said in words.
    assert len(page.console_errors) == 1 and "400" in page.console_errors[0]
