"""A worker's whole path in a real browser, from an invitation to the end (issue 24, "Must
show"): the researcher makes an invitation link on the campaign's platforms block and copies
it from the page; a worker opens it, reads what the task asks (rounds, time), starts, reads
the instructions and keeps the resume code, does the training round and its feedback and a
real round, and leaves. In a fresh browser, with no cookie, they open the same link, type the
code under "Resuming?" and go on where they stopped, to the completion code. Expected
answers of the hidden gold rounds never reach the worker's pages."""

import pytest
from django.test import Client
from django.urls import reverse

from cfannotate.campaigns.models import Campaign
from cfannotate.crowd.models import InvitationLink
from cfannotate.labeling.models import Assignment, AssignmentState, GoldKind, Judgment
from tests.browser.conftest import htmx_ready
from tests.factories import make_labeling_campaign, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _logged_in_context(browser, live_server, user):
    """A browser context with the researcher's session (the log-in page has its own test)."""
    client = Client()
    client.force_login(user)
    context = browser.new_context()
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    return context


def _invitation_from_the_page(browser, live_server, campaign) -> str:
    context = _logged_in_context(browser, live_server, campaign.owner)
    page = context.new_page()
    page.goto(live_server.url + reverse("crowd-platforms", args=[campaign.id]))
    create = page.get_by_role("button", name="New invitation link")
    form = page.locator("form", has=create)
    form.get_by_label("Name").fill("Pilot")
    form.get_by_label("Quota").fill("5")
    create.click()
    link = page.get_by_label("Invitation link Pilot")
    link.wait_for()
    url = link.input_value()
    context.close()
    return url


def _page_of(context):
    """A page of `context` that keeps the script errors it meets."""
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on("console", lambda msg: msg.type == "error" and page.errors.append(msg.text))
    return page


def _answer_all(page, items=3):
    htmx_ready(page)  # each choice is saved by htmx
    for index in range(1, items + 1):
        item = page.locator(f"#item-{index}")
        item.get_by_label("Valid", exact=True).check()
        item.get_by_label("Positive").check()
        page.locator(f"#status-{index}").get_by_text("Saved").wait_for()


def _no_gold_answers(page, campaign):
    html = page.content()
    for gold_round in campaign.gold_rounds.filter(kind=GoldKind.GOLD):
        for item in gold_round.items.all():
            assert item.explanation not in html, page.url


def test_a_worker_goes_from_an_invitation_to_the_end_resuming_by_code(live_server, browser):
    campaign = make_labeling_campaign(
        units=6, gold=2, training=1, rounds_per_assignment=2, gold_rounds_per_assignment=1
    )
    Campaign.objects.filter(pk=campaign.pk).update(owner=make_user())
    campaign.refresh_from_db()
    invitation = _invitation_from_the_page(browser, live_server, campaign)
    assert invitation.startswith(live_server.url + "/join/link/")

    # The invitation: what the task asks before anything starts, then the instructions.
    laptop = browser.new_context()
    page = _page_of(laptop)
    page.goto(invitation)
    page.get_by_role("heading", name=campaign.name).wait_for()
    assert "4 rounds" in page.get_by_role("list", name="This task").inner_text()
    page.get_by_role("button", name="Start").click()
    page.get_by_role("heading", name="Instructions").wait_for()
    code = page.locator("output#resume-code").inner_text()
    assert code
    page.get_by_role("link", name="Start").click()

    # Training, with the expected answers shown after it; then the first real round.
    page.get_by_role("heading", name="Training round", exact=True).wait_for()
    _no_gold_answers(page, campaign)
    _answer_all(page)
    page.get_by_role("button", name="Submit round").click()
    page.get_by_role("heading", name="Training round: the expected answers").wait_for()
    assert page.get_by_text("Known answer 1 of training round.").is_visible()
    page.get_by_role("link", name="Continue").click()
    page.get_by_role("heading", name="Round 1 of 3").wait_for()
    _no_gold_answers(page, campaign)
    assert page.locator(".resume-code strong").inner_text() == code
    _answer_all(page)
    page.get_by_role("button", name="Submit round").click()
    page.get_by_role("heading", name="Round 2 of 3").wait_for()
    page.locator("#item-1").get_by_label("Invalid", exact=True).check()
    page.locator("#item-1").get_by_label("Negative").check()
    page.locator("#status-1").get_by_text("Saved").wait_for()
    assert page.errors == [], page.errors
    laptop.close()

    # A fresh browser: the invitation again, no cookie; the code brings back round 2 as left.
    phone = browser.new_context(viewport={"width": 360, "height": 740}, is_mobile=True)
    page = _page_of(phone)
    page.goto(invitation)
    page.get_by_label("Resume code").fill(code)
    page.get_by_role("button", name="Resume").click()
    page.get_by_role("heading", name="Round 2 of 3").wait_for()
    htmx_ready(page)
    assert page.locator("#item-1").get_by_label("Invalid", exact=True).is_checked()
    assert page.locator("#item-1").get_by_label("Negative").is_checked()
    for index in (2, 3):
        item = page.locator(f"#item-{index}")
        item.get_by_label("Valid", exact=True).check()
        item.get_by_label("Positive").check()
        page.locator(f"#status-{index}").get_by_text("Saved").wait_for()
    page.get_by_role("button", name="Submit round").click()
    page.get_by_role("heading", name="Round 3 of 3").wait_for()
    _no_gold_answers(page, campaign)
    _answer_all(page)
    page.get_by_role("button", name="Submit round").click()

    # The end: the completion code, one assignment, one use of the link.
    page.get_by_role("heading", name="Thank you, all rounds are submitted").wait_for()
    assignment = Assignment.objects.get()
    assert assignment.state == AssignmentState.SUBMITTED
    assert page.locator("#completion-code").inner_text() == assignment.completion_code
    assert InvitationLink.objects.get(name="Pilot").uses == 1
    judgments = Judgment.objects.filter(round__assignment=assignment)
    assert judgments.count() == 12 and not judgments.filter(label=None).exists()
    assert page.errors == [], page.errors
    phone.close()
