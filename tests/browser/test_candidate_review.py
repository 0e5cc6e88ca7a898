"""Candidate review in a real browser: filter by code, reject and edit in place, promote two
candidates of an original to a gold round and find it on the gold page."""

import pytest
from playwright.sync_api import expect

from cfannotate.candidates.models import Candidate, CandidateStatus
from cfannotate.labeling.models import GoldRound
from tests.browser.conftest import htmx_ready, log_in
from tests.factories import make_campaign, make_candidate, make_original, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_review_reject_edit_and_promote_to_gold(live_server, page):
    researcher = make_user("gina")
    campaign = make_campaign(owner=researcher, name="Review in a browser")
    kids = make_original(campaign, text="It is great for kids.", label="positive")
    negated = make_candidate(kids, text="It is not great for kids.", control_code="negation")
    adults = make_candidate(kids, text="It is great for adults.", control_code="lexical")
    awful = make_candidate(kids, text="It is awful for kids.", control_code="lexical")
    film = make_original(campaign, text="A dull film.", label="negative")
    fine = make_candidate(film, text="A fine film.", control_code="lexical")

    log_in(page, live_server.url, "gina")
    page.goto(f"{live_server.url}/campaigns/{campaign.id}/")
    sections = page.get_by_role("navigation", name="Campaign sections")
    sections.get_by_role("link", name="Generation", exact=True).click()
    page.get_by_role("link", name="Review all 4 candidates").click()
    page.get_by_role("heading", name="Review candidates").wait_for()
    htmx_ready(page)
    page.evaluate("window.__marker = 'kept'")

    # 1. Filter by code: htmx swaps the results and pushes the filter into the URL.
    # The count is said twice: on the page, and in the status line that announces it.
    results = page.locator("#review-results")
    page.get_by_label("Code").select_option("negation")
    results.get_by_text("1 candidate match").wait_for()
    assert page.locator(f"#candidate-{negated.id}").is_visible()
    assert page.locator(f"#candidate-{adults.id}").count() == 0
    assert "control_code=negation" in page.url
    page.get_by_label("Code").select_option("")
    results.get_by_text("4 candidates match").wait_for()

    # 2. Reject a row: it changes in place.
    row = page.locator(f"#candidate-{adults.id}")
    row.get_by_role("button", name="Reject").click()
    page.locator(f"#candidate-{adults.id} .badge-rejected").wait_for()
    assert Candidate.objects.get(pk=adults.pk).status == CandidateStatus.REJECTED

    # 3. Edit one: the row becomes a form, then the saved row.
    page.locator(f"#candidate-{fine.id}").get_by_role("link", name="Edit").click()
    page.get_by_label("New text").fill("A thrilling film.")
    page.locator(f"#candidate-{fine.id}").get_by_role("button", name="Save").click()
    page.locator(f"#candidate-{fine.id}").get_by_text("A thrilling film.").wait_for()
    assert Candidate.objects.get(pk=fine.pk).text == "A thrilling film."
    assert page.evaluate("window.__marker") == "kept", "the page was reloaded, not swapped"

    # 3b. Tick the edited one and accept it in bulk: the results come back in place.
    page.get_by_label(f"Tick candidate {fine.id}").check()
    page.get_by_role("button", name="Accept ticked").click()
    results.get_by_text("1 candidate accepted.").wait_for()
    assert Candidate.objects.get(pk=fine.pk).status == CandidateStatus.SELECTED
    assert page.evaluate("window.__marker") == "kept", "the page was reloaded, not swapped"

    # 4. Promote two candidates of the first original to a gold round.
    page.locator(f"#candidate-{negated.id}").get_by_role("link", name="Promote to gold").click()
    page.get_by_role("heading", name="A new round on one original").wait_for()
    negated_row, awful_row = page.locator(f"#pick-{negated.id}"), page.locator(f"#pick-{awful.id}")
    negated_row.get_by_label("Use").check()
    # Nothing is chosen for the researcher: saving without the answers says what is missing.
    page.get_by_role("button", name="Save the round").click()
    page.get_by_role("alert").get_by_text("Choose the label a careful worker gives.").wait_for()
    page.console_errors.clear()  # the browser logs the refusal's 400; nothing else went wrong
    negated_row.locator(f'select[name="valid-{negated.id}"]').select_option("true")
    negated_row.locator(f'select[name="label-{negated.id}"]').select_option("negative")
    negated_row.locator(f'input[name="explanation-{negated.id}"]').fill("Negated, so negative.")
    awful_row.get_by_label("Use").check()
    awful_row.locator(f'select[name="valid-{awful.id}"]').select_option("true")
    awful_row.locator(f'select[name="label-{awful.id}"]').select_option("negative")
    page.get_by_role("button", name="Save the round").click()

    # 5. The gold page shows the round with its expected answers.
    page.get_by_role("heading", name="Gold and training rounds").wait_for()
    gold_round = GoldRound.objects.get(original=kids)
    card = page.locator(f"#gold-round-{gold_round.id}")
    card.get_by_text("It is not great for kids.").wait_for()
    assert card.get_by_text("It is awful for kids.").is_visible()
    assert card.locator("input[value='Negated, so negative.']").count() == 1
    assert sorted(gold_round.items.values_list("candidate_id", flat=True)) == sorted(
        [negated.id, awful.id]
    )
    card.get_by_role("button", name="Deactivate").click()
    page.locator(f"#gold-round-{gold_round.id}").get_by_text("Inactive").wait_for()
    assert page.console_errors == []


def test_upload_predicted_labels_refused_then_stored(live_server, page, tmp_path):
    researcher = make_user("hana")
    campaign = make_campaign(owner=researcher, name="Predictions in a browser")
    kids = make_original(campaign, text="It is great for kids.", label="positive")
    negated = make_candidate(kids, text="It is not great for kids.", control_code="negation")
    adults = make_candidate(kids, text="It is great for adults.", control_code="lexical")
    bad = tmp_path / "bad.csv"
    bad.write_text(f"id,label\n{negated.id},meh\n{adults.id},positive\n", encoding="utf-8")
    good = tmp_path / "good.csv"
    good.write_text(f"id,label,confidence\n{negated.id},negative,0.9\n", encoding="utf-8")

    log_in(page, live_server.url, "hana")
    page.goto(f"{live_server.url}/campaigns/{campaign.id}/candidates/")
    page.get_by_text("Upload your predicted labels").click()

    # A bad row: htmx swaps in the block with the row named; nothing is stored.
    page.set_input_files("#candidate-predictions-file", str(bad))
    page.get_by_role("button", name="Upload predictions").click()
    page.locator("#candidate-predictions").get_by_text("Unknown label 'meh'").wait_for()
    assert not Candidate.objects.exclude(prediction_source="").exists()

    # A good file: the page reloads with the count, and the row shows the prediction.
    page.set_input_files("#candidate-predictions-file", str(good))
    page.get_by_role("button", name="Upload predictions").click()
    page.get_by_text("Stored your predicted label for 1 candidate.").wait_for()
    page.locator(f"#candidate-{negated.id}").get_by_text("predicted: Negative (0.90)").wait_for()
    stored = Candidate.objects.get(pk=negated.pk)
    assert stored.predicted_label.value == "negative" and stored.prediction_source == "uploaded"
    # The refused upload's 400 is the only thing the console reports (browser and htmx).
    assert page.console_errors and all("400" in error for error in page.console_errors)


def test_a_row_keeps_the_focus_and_only_a_status_line_is_read_out(live_server, page):
    """Accept, Reject and Edit replace their row: the new row's first control takes the
    focus (it fell to <body>), and a one-line status says what was done or found; the
    results, swapped whole, are no live region. Each original's rows are a row group with
    a row-group header, not headers of every cell below them."""
    researcher = make_user("ines")
    campaign = make_campaign(owner=researcher, name="Review focus")
    kids = make_original(campaign, text="It is great for kids.", label="positive")
    negated = make_candidate(kids, text="It is not great for kids.", control_code="negation")
    adults = make_candidate(kids, text="It is great for adults.", control_code="lexical")
    film = make_original(campaign, text="A dull film.", label="negative")
    make_candidate(film, text="A fine film.", control_code="lexical")

    log_in(page, live_server.url, "ines")
    page.goto(f"{live_server.url}/campaigns/{campaign.id}/candidates/")
    htmx_ready(page)
    status = page.locator("#review-status")
    assert status.get_attribute("role") == "status" and status.inner_text() == ""
    assert page.locator("#review-results").get_attribute("aria-live") is None
    group = f"Original {kids.external_id}"
    assert page.get_by_role("rowheader", name=group).count() == 1
    assert page.get_by_role("columnheader", name=group).count() == 0

    row = page.locator(f"#candidate-{adults.id}")
    row.get_by_role("button", name="Accept").click()
    page.locator(f"#candidate-{adults.id} .badge-selected").wait_for()
    expect(page.get_by_label(f"Tick candidate {adults.id}")).to_be_focused()
    expect(status).to_have_text(f"Candidate {adults.id} accepted.")

    page.locator(f"#candidate-{negated.id}").get_by_role("link", name="Edit").click()
    expect(page.get_by_label("New text")).to_be_focused()
    page.get_by_label("New text").fill("It is not good for kids.")
    page.get_by_role("button", name="Save").click()
    # Saving annotates the new text again (spaCy): slower than an accept.
    page.locator(f"#candidate-{negated.id}").get_by_text("It is not good for kids.").wait_for()
    expect(status).to_have_text(f"Candidate {negated.id} saved.")
    expect(page.get_by_label(f"Tick candidate {negated.id}")).to_be_focused()

    page.get_by_label("Code").select_option("negation")
    expect(status).to_have_text("1 candidate match.")
    assert page.locator("#review-results").get_attribute("aria-live") is None
    assert page.console_errors == []
