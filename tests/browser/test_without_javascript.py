"""A researcher's controls in a browser with JavaScript off: what happens to a click that
lands before htmx has loaded. Every control is a plain form too; the page comes back with
what was done, or with the refusal next to the form."""

import pytest

from cfannotate.campaigns.models import Campaign, CampaignStatus
from cfannotate.candidates.models import Candidate, CandidateStatus
from tests.browser.conftest import log_in
from tests.factories import make_campaign, make_candidate, make_original, make_unit, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def plain_page(browser):
    context = browser.new_context(java_script_enabled=False)
    yield context.new_page()
    context.close()


def test_a_researcher_works_without_javascript(live_server, plain_page):
    page = plain_page
    researcher = make_user("ida")
    campaign = make_campaign(owner=researcher, name="No scripts")
    kids = make_original(campaign, text="It is great for kids.", label="positive")
    negated = make_candidate(kids, text="It is not great for kids.", control_code="negation")
    adults = make_candidate(kids, text="It is great for adults.", control_code="lexical")
    film = make_original(campaign, text="A dull film.", label="negative")
    fine = make_candidate(film, text="A fine film.", control_code="lexical")

    log_in(page, live_server.url, "ida")
    base = f"{live_server.url}/campaigns/{campaign.id}"

    # Labeling refused (nothing to label): the section's page says why, with a way back.
    page.goto(f"{base}/labeling-and-platforms/")
    page.get_by_role("button", name="Open for labeling").click()
    page.get_by_role("alert").get_by_text("nothing to label yet").wait_for()
    assert page.get_by_role("heading", name="Labeling and platforms").is_visible()
    page.get_by_role("link", name="Back to Labeling and platforms").click()

    # Then opened: back on the page, the warnings as messages, Pause offered.
    make_unit(kids)
    page.get_by_role("button", name="Open for labeling").click()
    page.get_by_role("button", name="Pause labeling").wait_for()
    assert page.url == f"{base}/labeling-and-platforms/"
    assert page.get_by_role("status").get_by_text("Fewer active gold rounds").count() == 1
    assert Campaign.objects.get(pk=campaign.pk).status == CampaignStatus.LABELING

    # Review, filtered: tick one and reject it; the filter stays.
    page.goto(f"{base}/candidates/?control_code=lexical")
    page.get_by_label(f"Tick candidate {fine.id}").check()
    page.get_by_role("button", name="Reject ticked").click()
    page.get_by_text("1 candidate rejected.").wait_for()
    assert "control_code=lexical" in page.url
    assert Candidate.objects.get(pk=fine.pk).status == CandidateStatus.REJECTED
    assert page.locator(f"#candidate-{negated.id}").count() == 0

    # Edit a row: an empty text is refused in place, then saved.
    page.locator(f"#candidate-{adults.id}").get_by_role("link", name="Edit").click()
    page.get_by_label("New text").fill(" ")
    page.get_by_role("button", name="Save").click()
    page.get_by_role("alert").wait_for()
    page.get_by_label("New text").fill("It is great for grown-ups.")
    page.get_by_role("button", name="Save").click()
    page.get_by_role("heading", name="Review candidates").wait_for()
    assert page.get_by_text("It is great for grown-ups.").count() == 1

    # Quality control, run by hand: the page comes back saying what it did.
    page.goto(f"{base}/quality/")
    page.get_by_role("button", name="Run quality control now").click()
    page.get_by_role("status").get_by_text("Quality control ran").wait_for()

    # The model evaluation, which the exports page loads with htmx, is a page of its own.
    page.goto(f"{base}/exports/")
    page.get_by_role("link", name="Open the model evaluation").click()
    page.get_by_role("heading", name="Model evaluation").wait_for()
    page.get_by_role("button", name="Run Table 3: augmentation").click()
    page.get_by_role("heading", name="Model evaluation").wait_for()
    assert page.get_by_role("alert").count() == 1  # too few labeled originals, said in place


def test_a_researcher_uploads_originals_without_javascript(live_server, plain_page, tmp_path):
    """Each step of the upload comes back to the data page, the waiting file with it."""
    page = plain_page
    researcher = make_user("ivo")
    campaign = make_campaign(owner=researcher, name="Plain upload")
    reviews = tmp_path / "reviews.csv"
    reviews.write_text("id,review,sentiment\nr1,A warm film.,pos\nr2,Dull.,neg\n")
    log_in(page, live_server.url, "ivo")
    data = f"{live_server.url}/campaigns/{campaign.id}/data/"

    empty = tmp_path / "empty.csv"
    empty.write_text("")
    page.goto(data)
    page.set_input_files("#original-upload-file", str(empty))
    page.get_by_role("button", name="Preview").click()  # refused: the data page with why
    page.get_by_role("alert").wait_for()
    assert page.get_by_role("heading", name="Data", exact=True).is_visible()
    page.set_input_files("#original-upload-file", str(reviews))
    page.get_by_role("button", name="Preview").click()
    page.get_by_role("button", name="Import 2 rows").wait_for()
    assert page.url == data  # back on the data page, the preview in it
    page.reload()  # still there after a reload
    page.get_by_label("Id").select_option("")
    page.get_by_role("button", name="Update preview").click()
    page.get_by_role("button", name="Import 2 rows").wait_for()
    assert page.get_by_label("Id").input_value() == ""  # the mapping last chosen
    page.get_by_role("button", name="Import 2 rows").click()
    page.get_by_text("Imported 2 originals from reviews.csv.").wait_for()
    assert page.url == data
    assert sorted(campaign.originals.values_list("external_id", flat=True)) == ["row-1", "row-2"]
