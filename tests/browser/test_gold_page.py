"""The gold page in a real browser (issue 24, item 3): the researcher searches the originals
free for a round as they type, turns the list's pages, opens one in place, ticks its
candidates with the answers set beside each, and sees the round in the list of rounds, its
state following when it is switched off; a refused save is said in place and keeps what
was typed. A file of rounds is uploaded in place too, a bad one refused with its lines."""

import json

import pytest
from django.test import Client
from django.urls import reverse

from cfannotate.labeling.gold_views import PICK_PER_PAGE
from cfannotate.labeling.models import GoldKind, GoldRound
from tests.browser.conftest import htmx_ready
from tests.factories import make_campaign, make_candidate, make_original, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _researcher_page(browser, live_server, user):
    client = Client()
    client.force_login(user)
    context = browser.new_context()
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    # The refused save answers 400, which Chromium and htmx log: the only console errors allowed.
    expected = ("status of 400", "Response Status Error Code 400")
    page.on(
        "console",
        lambda msg: (
            msg.type == "error"
            and not any(words in msg.text for words in expected)
            and page.errors.append(msg.text)
        ),
    )
    return page


def test_a_researcher_picks_an_original_and_its_candidates_for_a_training_round(
    live_server, browser
):
    campaign = make_campaign(owner=make_user(), name="Reviews")
    for number in range(PICK_PER_PAGE + 2):
        make_original(campaign, text=f"Filler review number {number:02d}.")
    original = make_original(campaign, text="The <b>plot</b> is clever.", label="positive")
    dumb = make_candidate(original, text="The plot is dumb.")
    scrambled = make_candidate(original, text="Plot the clever is.")
    make_candidate(original, text="The plot is very clever.")
    page = _researcher_page(browser, live_server, campaign.owner)
    page.goto(live_server.url + reverse("gold-page", args=[campaign.id]))
    loads = []
    page.on("load", lambda _: loads.append(page.url))

    # The list, a page at a time; the search narrows it as the researcher types.
    picker = page.locator("#gold-picker")
    picker.get_by_text("Page 1 of 2").wait_for()
    picker.get_by_role("link", name="Next").click()
    picker.get_by_text("Page 2 of 2").wait_for()
    assert "?page=2" in page.url
    page.get_by_label("Search originals").fill("clever")
    picker.get_by_text("1 original match “clever”.").wait_for()
    assert "q=clever" in page.url
    row = picker.locator("tr", has_text="is clever.")
    assert row.locator("td.cf-text").inner_text() == "The <b>plot</b> is clever."  # as text
    assert row.locator("td.num").inner_text() == "3"

    # Open it in place; tick two candidates, one with a wrong label first.
    row.get_by_role("link", name=f"Open original {original.external_id}").click()
    form = page.locator("#gold-pick")
    form.get_by_role("button", name="Save the round").wait_for()
    form.get_by_label("Training").check()
    form.locator(f"#pick-use-{dumb.id}").check()
    form.locator(f"#pick-use-{scrambled.id}").check()
    form.get_by_label("Valid? (candidate 1)").select_option(label="valid")
    form.get_by_label("Label (candidate 1)").select_option(label="Negative")
    form.get_by_label("Explanation (candidate 1)").fill("Dumb turns it negative.")
    form.get_by_label("Valid? (candidate 2)").select_option(label="not valid")
    form.get_by_label("Label (candidate 2)").select_option(label="Positive")
    form.get_by_label("Counterfactual 1", exact=True).fill("The plot is stupid.")
    form.get_by_role("button", name="Save the round").click()
    page.get_by_role("alert").get_by_text("Either tick candidates or type new").wait_for()
    assert not GoldRound.objects.exists()
    assert form.get_by_label("Explanation (candidate 1)").input_value() == "Dumb turns it negative."
    form.get_by_label("Counterfactual 1", exact=True).fill("")
    form.get_by_role("button", name="Save the round").click()

    # Back on the gold page: the message, the round with its kind and state, answers in place.
    page.get_by_text(f"A training round was made from original {original.external_id}.").wait_for()
    gold_round = GoldRound.objects.get()
    assert gold_round.kind == GoldKind.TRAINING
    shown = page.locator(f"#gold-round-{gold_round.id}")
    assert "Training" in shown.get_by_role("heading").inner_text()
    assert "Active" in shown.get_by_role("heading").inner_text()
    assert [
        (item.candidate_id, item.expected_valid, item.expected_label.value, item.explanation)
        for item in gold_round.items.order_by("position")
    ] == [
        (dumb.id, True, "negative", "Dumb turns it negative."),
        (scrambled.id, False, "positive", ""),
    ]
    shown.get_by_label("Explanation (item 2)").fill("Word order broken.")
    shown.get_by_role("button", name="Save answers").click()
    page.locator(f"#gold-round-{gold_round.id}").get_by_text("Answers saved.").wait_for()
    assert gold_round.items.get(position=2).explanation == "Word order broken."
    state = page.locator(f"#gold-round-state-{gold_round.id}")  # the table of rounds
    assert state.inner_text() == "Active"
    page.locator(f"#gold-round-{gold_round.id}").get_by_role("button", name="Deactivate").click()
    page.locator(f"#gold-round-{gold_round.id}").get_by_text("Inactive").wait_for()
    assert state.inner_text() == "Inactive"  # switched out of band, no reload
    assert page.locator(f"#gold-round-state-{gold_round.id}").count() == 1
    assert len(loads) == 1  # the save's redirect; searching, paging and opening loaded nothing
    assert page.errors == [], page.errors


def test_a_researcher_uploads_a_file_of_rounds_and_a_bad_one_is_said_in_place(
    live_server, browser, tmp_path
):
    campaign = make_campaign(owner=make_user(), name="Reviews")
    original = make_original(campaign, text="The plot is clever.", label="positive")
    good = tmp_path / "gold.jsonl"
    item = {"text": "The plot is dumb.", "valid": True, "label": "negative"}
    good.write_text(json.dumps({"original_id": original.external_id, "items": [item]}) + "\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"original_id": "nope", "items": []}\n')
    page = _researcher_page(browser, live_server, campaign.owner)
    page.goto(live_server.url + reverse("gold-page", args=[campaign.id]))
    htmx_ready(page)

    upload = page.locator("#gold-import")
    upload.locator("input[type=file]").set_input_files(str(bad))
    upload.get_by_role("button", name="Import rounds").click()
    page.locator("#gold-import").get_by_text("original_id: No original 'nope'.").wait_for()
    assert not GoldRound.objects.exists()

    page.locator("#gold-import input[type=file]").set_input_files(str(good))
    page.locator("#gold-import").get_by_role("button", name="Import rounds").click()
    page.get_by_text("Imported 1 round from gold.jsonl.").wait_for()
    assert page.locator(f"#gold-round-{GoldRound.objects.get().pk}").is_visible()
    assert page.errors == []
