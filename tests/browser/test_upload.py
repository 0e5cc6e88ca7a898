"""Uploading a dataset in a real browser: choose a CSV, see its preview, fix a mapping, import."""

import pytest

from tests.browser.conftest import log_in
from tests.factories import make_campaign, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CSV = (
    "id,text,review,sentiment\n"
    "r1,see review,A warm and funny film.,pos\n"
    "r2,see review,Dull and far too long.,neg\n"
)


def test_upload_preview_remap_and_import(live_server, page, settings, tmp_path):
    settings.UPLOAD_DIR = tmp_path / "uploads"
    researcher = make_user("erin")
    campaign = make_campaign(owner=researcher, name="Upload reviews")
    data = tmp_path / "reviews.csv"
    data.write_text(CSV, encoding="utf-8")

    log_in(page, live_server.url, "erin")
    page.goto(f"{live_server.url}/campaigns/{campaign.id}/data/")
    assert page.get_by_text("No originals yet.").is_visible()

    page.set_input_files("#original-upload-file", str(data))
    page.get_by_role("button", name="Preview").click()
    page.locator("#upload-sample").wait_for()
    assert page.locator("#upload-row-count").inner_text() == "2"
    assert page.locator("#upload-sample tbody tr").count() == 2
    # The header "text" wins the guess, but the texts are in "review".
    assert page.locator("#map-text").input_value() == "text"
    assert page.locator("#map-label").input_value() == "sentiment"
    labels = page.locator("#upload-labels tbody").inner_text()
    assert "pos" in labels and "Positive" in labels

    page.select_option("#map-text", "review")
    page.locator("#upload-sample th", has_text="review").get_by_text("Sentence").wait_for()
    assert page.locator("#map-text").input_value() == "review"

    page.get_by_role("button", name="Import 2 rows").click()
    page.get_by_text("Imported 2 originals from reviews.csv.").wait_for()
    originals = page.locator("#originals").inner_text()
    assert "A warm and funny film." in originals and "see review" not in originals
    assert campaign.originals.count() == 2
    assert page.console_errors == []
