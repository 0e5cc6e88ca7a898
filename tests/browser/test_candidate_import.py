"""Importing the researcher's own candidates in a real browser: the file's rows are checked
at once (a bad one named in place), a good file's import shows its progress as the worker
annotates it part by part, can be cancelled, and the page reloads with the candidates when
it is done."""

import pytest

from cfannotate.campaigns.models import Original
from cfannotate.candidates import imports
from cfannotate.candidates.imports import candidate_import_process
from cfannotate.candidates.models import Candidate, CandidateImport
from tests.browser.conftest import htmx_ready, log_in
from tests.factories import make_campaign, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GOOD = (
    "original_id,text\n"
    "r1,It is not great for kids.\n"
    "r1,It is great for nobody.\n"
    "r2,The plot is dull and slow.\n"
)


def _open_generation(page, base_url: str) -> None:
    log_in(page, base_url, "iris")
    page.get_by_role("link", name="Own candidates").click()
    sections = page.get_by_role("navigation", name="Campaign sections")
    sections.get_by_role("link", name="Generation", exact=True).click()
    page.get_by_role("heading", name="Import your own candidates").wait_for()
    htmx_ready(page)


def _upload(page, name: str, content: str) -> None:
    block = page.locator("#candidate-import")
    block.get_by_label("CSV or JSONL file").set_input_files(
        files=[{"name": name, "mimeType": "text/csv", "buffer": content.encode()}]
    )
    block.get_by_role("button", name="Import candidates").click()


@pytest.fixture
def campaign(db):
    researcher = make_user("iris")
    campaign = make_campaign(owner=researcher, name="Own candidates")
    positive = campaign.labels.get(value="positive")
    for external_id, text in (("r1", "It is great for kids."), ("r2", "The plot is lively.")):
        Original.objects.create(
            campaign=campaign, external_id=external_id, text=text, label=positive
        )
    return campaign


def test_an_import_shows_its_progress_then_the_candidates(live_server, page, campaign, monkeypatch):
    _open_generation(page, live_server.url)
    block = page.locator("#candidate-import")

    _upload(page, "bad.csv", "original_id,text\nr9,Nobody's review.\n")
    block.get_by_role("alert").get_by_text(
        "original_id: No original 'r9' in this campaign."
    ).wait_for()
    assert not CandidateImport.objects.exists()

    _upload(page, "mine.csv", GOOD)
    block.get_by_text("Importing mine.csv").wait_for()
    block.get_by_text("0 of 3 rows annotated").wait_for()
    block.get_by_text("waiting for a worker to take it").wait_for()
    status = page.locator("#generation-status")
    assert status.get_attribute("role") == "status"
    assert status.inner_text() == (
        "mine.csv: 3 rows, all valid; being annotated and stored in the background."
    )
    job = CandidateImport.objects.get()

    # The worker, one row a part; after each, the page shows the count before it goes on.
    monkeypatch.setattr(imports, "IMPORT_PART_ROWS", 1)
    record = imports._progress_record
    shown = []

    def record_and_look(import_id, done, total):
        record(import_id, done, total)
        if done < total:
            block.get_by_text(f"{done} of 3 rows annotated").wait_for(timeout=10_000)
            shown.append(done)

    monkeypatch.setattr(imports, "_progress_record", record_and_look)
    assert candidate_import_process(job.id) == "done"
    assert shown == [1, 2]

    # Done: the poll reloads the page, which says what came in and lists the candidates.
    page.get_by_text("Imported 3 candidates for 2 originals from mine.csv.").wait_for(
        timeout=10_000
    )
    page.get_by_text("Last import: mine.csv, 3 candidates for 2 originals").wait_for()
    page.get_by_text("It is great for nobody.").first.wait_for()
    assert Candidate.objects.filter(campaign=campaign, source="imported").count() == 3


def test_an_import_can_be_cancelled_from_the_page(live_server, page, campaign):
    _open_generation(page, live_server.url)
    _upload(page, "mine.csv", GOOD)
    block = page.locator("#candidate-import")
    block.get_by_role("button", name="Cancel the import").click()
    cancelled = "The import of mine.csv was cancelled; nothing of it was imported."
    block.get_by_text(cancelled).wait_for()
    assert page.locator("#generation-status").inner_text() == cancelled
    job = CandidateImport.objects.get()
    assert candidate_import_process(job.id) == "cancelled"
    assert not Candidate.objects.filter(campaign=campaign).exists()
    # The form is back for the next file.
    block.get_by_role("button", name="Import candidates").wait_for()
