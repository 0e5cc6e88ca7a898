"""Platform errors in a real browser: said inside the page, in words, with what to fix; a
server's whole error page never replaces a block of the page."""

import pytest

from cfannotate.crowd import campaign_views
from tests.browser.conftest import log_in
from tests.crowd.conftest import make_prolific_publication
from tests.factories import make_labeling_campaign, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _platforms_page(live_server, page, name):
    researcher = make_user(name)
    campaign = make_labeling_campaign(units=2)
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    log_in(page, live_server.url, name)
    page.goto(f"{live_server.url}/campaigns/{campaign.id}/platforms/")
    return campaign


def test_a_prolific_refusal_is_said_in_the_page_with_what_to_fix(live_server, page, prolific):
    _platforms_page(live_server, page, "gina")
    prolific.refuse["studies"] = (
        400,
        {"error": {"detail": {"reward": ["Reward is below the minimum pay per hour"]}}},
    )
    page.get_by_text("Create a Prolific draft study").click()
    page.fill("#prolific_name", "Study")
    page.fill("#prolific_description", "Judge edited sentences.")
    page.fill("#prolific_places", "3")
    page.fill("#prolific_reward_cents", "5")
    page.fill("#prolific_minutes", "10")
    page.get_by_role("button", name="Create draft study").click()
    alert = page.locator("#platform-error")
    alert.wait_for()
    said = alert.inner_text()
    assert "reward: Reward is below the minimum pay per hour." in said
    assert "What to fix: Change Reward (cents or pence)" in said
    # What was typed is still there, in the form left open, to change and send again.
    assert page.locator("#prolific_description").is_visible()
    assert page.input_value("#prolific_description") == "Judge edited sentences."
    assert page.input_value("#prolific_reward_cents") == "5"
    # The page is still the styled page around the block.
    assert page.get_by_role("heading", name="Crowd platforms").is_visible()
    assert page.locator("link[rel=stylesheet]").count() == 1
    assert page.get_by_role("button", name="New invitation link").is_visible()


def test_a_whole_error_page_is_said_in_words_and_not_swapped_in(live_server, page, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(campaign_views, "invitation_link_create", broken)
    _platforms_page(live_server, page, "hugo")
    page.fill("#link_name", "Lab")
    page.get_by_role("button", name="New invitation link").click()
    notice = page.locator("#request-problem")
    notice.wait_for()
    assert (
        "error 500" in notice.inner_text() and "Nothing on this page changed" in notice.inner_text()
    )
    assert page.get_by_role("heading", name="Something went wrong on the server").count() == 0
    assert page.get_by_role("heading", name="Crowd platforms").is_visible()
    assert page.get_by_role("button", name="New invitation link").is_visible()


def test_a_sync_answer_not_understood_is_said_in_the_page(live_server, page, prolific):
    """Prolific answers a page of submissions that are not objects: the Sync button's
    block says so in words, with what to do, and the page stays as it was around it."""
    campaign = _platforms_page(live_server, page, "ines")
    study = make_prolific_publication(campaign)
    prolific.studies[study.external_id] = {"id": study.external_id, "status": "ACTIVE"}
    prolific.refuse["submissions"] = (200, {"results": ["not a submission"], "next": None})
    page.reload()

    page.get_by_role("button", name="Sync status").click()

    notice = page.locator("p.notice", has_text="answered in a way cfannotate did not expect")
    notice.wait_for()
    assert notice.inner_text() == (
        "Prolific: Prolific answered in a way cfannotate did not expect (AttributeError); "
        "the server log has the details. What to fix: Sync again later."
    )
    # The failed sync is in the block's log of platform actions too, not left pending.
    assert page.get_by_role("cell", name="Refused, unreachable or not").count() >= 1
    assert page.get_by_role("cell", name="Sent, no answer yet").count() == 0
    assert not page.locator("#request-problem").is_visible()  # no server error
    assert page.get_by_role("heading", name="Crowd platforms").is_visible()
