"""A worker who uses a keyboard, a screen reader or speech input can do the whole task:
what is missing is said in words, saves are read, one-key shortcuts can be turned off,
and the lease is never lost without a warning and a way to keep it (WCAG 2.1 A/AA)."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from cfannotate.campaigns.models import Campaign
from cfannotate.core.worker_tokens import join_token
from cfannotate.labeling.models import Assignment, AssignmentState
from tests.browser.conftest import htmx_ready
from tests.factories import make_labeling_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BAD_RED = "rgb(179, 38, 30)"


def _first_round(live_server, page, **settings) -> Campaign:
    campaign = make_labeling_campaign(
        units=4, training=0, rounds_per_assignment=2, gold_rounds_per_assignment=0, **settings
    )
    page.goto(live_server.url + reverse("join", kwargs={"token": join_token(campaign.id)}))
    page.get_by_role("button", name="Start").click()
    page.get_by_role("link", name="Start").click()
    page.get_by_role("heading", name="Round 1 of 2").wait_for()
    htmx_ready(page)
    return campaign


def _wait_announced(page, text: str) -> None:
    # A locator, not wait_for_function: the CSP refuses the polling that a false first
    # check starts (see htmx_ready).
    page.locator("[data-announcer]", has_text=text).wait_for()
    assert page.locator("[data-announcer]").text_content() == text


def test_a_refused_submit_says_in_words_which_versions_lack_what(live_server, page):
    _first_round(live_server, page)
    submit = page.get_by_role("button", name="Submit round")
    assert submit.get_attribute("aria-disabled") is None  # it works: it was said disabled
    item = page.locator("#item-2")
    item.get_by_label("Valid", exact=True).check()
    page.locator("#status-2").wait_for()
    submit.click()

    alert = page.locator("[data-missing-alert]")
    alert.get_by_text("Edited versions 1, 2 and 3 still need an answer before").wait_for()
    assert page.locator("#missing-1").inner_text() == "Choose Valid or Invalid, and a label."
    assert page.locator("#missing-2").inner_text() == "Choose a label."
    # Only what is lacking is marked invalid, and it is described by the note.
    valid_2 = item.get_by_role("radiogroup", name="Is edited version 2 valid?")
    label_2 = item.get_by_role("radiogroup", name="Label of edited version 2")
    assert valid_2.get_attribute("aria-invalid") is None
    assert label_2.get_attribute("aria-invalid") == "true"
    assert label_2.get_attribute("aria-describedby") == "missing-2"
    # The first missing one has the focus and the keys, and is red all the same.
    first = page.locator("#item-1")
    assert first.get_attribute("aria-current") == "true"
    assert first.evaluate("item => getComputedStyle(item).borderTopColor") == BAD_RED

    # Answered, the mark goes, in words as in colour.
    item.get_by_label("Negative").check()
    page.locator("#missing-2").get_by_text("Choose a label.").wait_for(state="detached")
    assert page.locator("#missing-2").inner_text() == ""
    assert label_2.get_attribute("aria-invalid") is None
    assert "cf-missing" not in (item.get_attribute("class") or "")
    assert page.console_errors == [], page.console_errors


def test_each_saved_click_is_read_in_the_rounds_one_status_line(live_server, page):
    _first_round(live_server, page)
    assert page.locator("[data-announcer]").get_attribute("role") == "status"
    # The statuses beside each version are seen, not read (each would be read filled).
    assert page.locator("#status-1").get_attribute("role") is None

    page.locator("#item-1").get_by_label("Valid", exact=True).check()
    _wait_announced(page, "Edited version 1: Valid, saved. Choose a label.")
    page.keyboard.press("2")  # the label by its key: read without the key's number
    _wait_announced(
        page, "Edited version 1: Valid, Positive, saved. 2 edited versions still to answer."
    )


def test_one_key_shortcuts_can_be_turned_off_and_stay_off(live_server, page):
    _first_round(live_server, page)
    toggle = page.get_by_label("Keyboard shortcuts", exact=False)
    assert toggle.is_checked()
    toggle.uncheck()
    page.locator("#round-title").focus()
    page.keyboard.press("v")
    page.keyboard.press("1")
    page.wait_for_timeout(300)
    assert page.locator("#item-1 input:checked").count() == 0
    assert page.locator("#item-1 kbd").first.is_hidden()  # no hints for keys that do nothing

    page.reload()  # remembered in this browser, on every worker page
    htmx_ready(page)
    assert not page.get_by_label("Keyboard shortcuts", exact=False).is_checked()
    page.keyboard.press("v")
    page.wait_for_timeout(300)
    assert page.locator("#item-1 input:checked").count() == 0
    page.get_by_role("link", name="Instructions").click()
    assert not page.get_by_label("Keyboard shortcuts", exact=False).is_checked()
    page.go_back()
    htmx_ready(page)

    page.get_by_label("Keyboard shortcuts", exact=False).check()
    page.locator("#round-title").focus()
    page.keyboard.press("v")
    page.locator("#item-1 input:checked").wait_for(state="attached")
    assert page.console_errors == [], page.console_errors


def test_the_page_warns_before_the_lease_runs_out_and_keeps_it(live_server, page):
    page.clock.install()  # time runs as usual until the test moves it on
    campaign = _first_round(live_server, page, lease_minutes=10)
    assignment = Assignment.objects.get(campaign=campaign)
    warning = page.get_by_role("alert").filter(has_text="this assignment ends")
    assert warning.count() == 0

    # Warned five minutes before the end of a ten-minute lease, not sooner.
    page.clock.fast_forward("04:50")
    page.wait_for_timeout(200)
    assert warning.count() == 0
    page.clock.fast_forward("00:15")
    warning.wait_for()
    assert "In about 5 minutes" in warning.inner_text()
    renewed_before = assignment.lease_expires_at

    page.get_by_role("button", name="I'm still here").click()
    warning.wait_for(state="hidden")
    assignment.refresh_from_db()
    assert assignment.lease_expires_at > renewed_before  # the server renewed it
    assert assignment.state == AssignmentState.ACTIVE

    # An answer renews it too: the warning's clock starts again.
    page.clock.fast_forward("04:00")
    page.locator("#item-1").get_by_label("Valid", exact=True).check()
    page.locator("[data-announcer]", has_text="saved").wait_for()
    page.clock.fast_forward("02:00")
    page.wait_for_timeout(200)
    assert warning.count() == 0

    assert page.console_errors == [], page.console_errors

    # Gone for good: at the end the page reloads and says the assignment ended (a 410).
    Assignment.objects.filter(pk=assignment.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    page.clock.fast_forward("09:00")
    page.get_by_text("This assignment expired after 10 minutes without activity").wait_for()


def test_the_instructions_say_how_long_a_pause_may_be(live_server, page):
    campaign = make_labeling_campaign(units=2, rounds_per_assignment=1, lease_minutes=45)
    page.goto(live_server.url + reverse("join", kwargs={"token": join_token(campaign.id)}))
    page.get_by_role("button", name="Start").click()
    page.get_by_text(
        "If you answer nothing for 45 minutes, the assignment ends and its rounds go to "
        "other workers."
    ).wait_for()
    htmx_ready(page)
    assert page.get_by_label("Keyboard shortcuts", exact=False).is_visible()
