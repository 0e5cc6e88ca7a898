"""The researcher's pages in a real browser: login, campaign list, htmx paging, logout."""

import pytest

from tests.browser.conftest import htmx_ready, log_in
from tests.factories import make_campaign, make_labeling_campaign, make_original, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_login_browse_and_page_with_htmx(live_server, page):
    researcher = make_user("carol")
    campaign = make_campaign(owner=researcher, name="Browser reviews")
    for index in range(30):
        make_original(campaign, text=f"Review number {index:02d}")

    log_in(page, live_server.url, "carol")
    page.get_by_role("link", name="Browser reviews").click()
    # The originals are the campaign's data section, one click from every campaign page.
    nav = page.get_by_role("navigation", name="Campaign sections")
    nav.get_by_role("link", name="Data", exact=True).click()
    nav.locator('[aria-current="page"]', has_text="Data").wait_for()
    htmx_ready(page)
    assert page.get_by_text("Page 1 of 2").is_visible()

    # htmx swaps only the originals fragment and pushes the URL.
    page.evaluate("window.__marker = 'kept'")
    page.get_by_role("link", name="Next").click()
    page.get_by_text("Page 2 of 2").wait_for()
    assert page.get_by_text("Review number 29").is_visible()
    assert page.evaluate("window.__marker") == "kept", "the page was reloaded, not swapped"
    assert page.url.endswith("?page=2")

    # No CSP violation or script error happened along the way.
    assert page.console_errors == []

    page.get_by_role("button", name="Log out carol").click()
    page.get_by_role("link", name="Log in as a researcher").wait_for()


def test_wrong_password_shows_an_error(live_server, page):
    make_user("dave")
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "dave")
    page.fill("#id_password", "wrong")
    page.click("button[type=submit]")
    alert = page.get_by_role("alert")
    assert "correct username and password" in alert.inner_text()


def test_a_link_field_has_a_copy_button_that_copies_it(live_server, page):
    researcher = make_user("hana")
    campaign = make_labeling_campaign(units=2)
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    log_in(page, live_server.url, "hana")
    page.goto(f"{live_server.url}/campaigns/{campaign.id}/labeling-and-platforms/")
    htmx_ready(page)
    field = page.get_by_label("Invitation link", exact=True)
    copy = field.locator("xpath=following-sibling::button[1]")
    assert copy.inner_text() == "Copy"
    copy.click()
    page.get_by_role("button", name="Copied").wait_for()
    assert page.evaluate("() => navigator.clipboard.readText()") == field.input_value()
    assert field.input_value().startswith(f"{live_server.url}/join/")

    # A link made later, in a block htmx swaps in, gets its button too.
    block = page.locator("#platforms-block")
    block.locator("#link_name").fill("Pilot crowd")
    block.get_by_role("button", name="New invitation link").click()
    made = page.get_by_label("Invitation link Pilot crowd")
    made.wait_for()
    made.locator("xpath=following-sibling::button[1]").click()
    block.get_by_role("button", name="Copied").wait_for()
    assert page.evaluate("() => navigator.clipboard.readText()") == made.input_value()
    assert page.console_errors == []
