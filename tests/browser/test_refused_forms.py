"""Refused researcher forms in a real browser: each field's help text and error are its
accessible description, and the focus goes to a summary of what to fix, which links to the
fields; the settings form keeps the focus on its button when it saves."""

import re

import pytest
from playwright.sync_api import expect

from cfannotate.campaigns.models import Campaign
from tests.browser.conftest import htmx_ready, log_in
from tests.factories import make_campaign, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROUNDS = re.compile(r"^Rounds per assignment")  # not "Gold rounds per assignment"


def test_a_refused_new_campaign_says_what_to_fix_and_where(live_server, page):
    make_user("nora")
    log_in(page, live_server.url, "nora")
    page.goto(f"{live_server.url}/campaigns/new/")
    htmx_ready(page)
    labels = page.get_by_role("textbox", name="Labels")
    expect(labels).to_have_accessible_description(re.compile(r"^Custom tasks only"))

    page.get_by_label("Custom labels").check()
    page.get_by_role("button", name="Create campaign").click()
    summary = page.get_by_role("alert").filter(has_text="The campaign was not created")
    summary.wait_for()
    assert not Campaign.objects.exists()
    # The summary has the focus, not the top of the page, and links to each field.
    expect(page.locator("#error-summary")).to_be_focused()
    name = page.get_by_label("Campaign name")
    expect(name).to_have_accessible_description("This field is required.")  # its error
    summary.get_by_role("link", name="Campaign name").click()
    expect(name).to_be_focused()
    # The labels' description is its help text and then its error.
    description = labels.evaluate(
        "(field) => field.getAttribute('aria-describedby').split(' ')"
        ".map((id) => document.getElementById(id).textContent.trim())"
    )
    assert len(description) == 2 and description[0].startswith("Custom tasks only")
    expect(labels).to_have_accessible_description(re.compile(re.escape(description[1]) + "$"))
    assert page.console_errors and all("400" in error for error in page.console_errors)


def test_refused_settings_take_the_focus_to_the_summary_and_saved_ones_keep_it(live_server, page):
    researcher = make_user("otto")
    campaign = make_campaign(owner=researcher, name="Settings in a browser")
    log_in(page, live_server.url, "otto")
    page.goto(f"{live_server.url}/campaigns/{campaign.id}/settings/")
    htmx_ready(page)
    slices = page.get_by_role("group", name="Slices")
    expect(slices).to_have_accessible_description(re.compile(r"^Originals matching a slice"))
    # "Saving…" shows in a status region that stays while the save runs (the style sheet
    # keeps it out of the accessibility tree until then).
    assert page.get_by_role("status").locator(".htmx-indicator").count() == 1
    assert "Saving" not in page.locator("#settings-form").aria_snapshot()

    rounds = page.get_by_label(ROUNDS)
    rounds.fill("-1")
    page.get_by_role("button", name="Save settings").click()
    summary = page.get_by_role("alert").filter(has_text="Nothing was saved")
    summary.wait_for()
    # htmx focuses the summary's [autofocus] once the swapped form settles.
    expect(page.locator("#error-summary")).to_be_focused()
    expect(page.get_by_label(ROUNDS)).to_have_accessible_description(
        re.compile(r"greater than or equal to")
    )
    summary.get_by_role("link", name="Rounds per assignment").click()
    expect(page.get_by_label(ROUNDS)).to_be_focused()

    page.get_by_label(ROUNDS).fill("4")
    page.get_by_role("button", name="Save settings").click()
    page.get_by_text("Saved:").wait_for()
    expect(page.get_by_role("button", name="Save settings")).to_be_focused()
    assert Campaign.objects.get(pk=campaign.pk).rounds_per_assignment == 4
