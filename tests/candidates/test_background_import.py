"""A researcher's file of candidates, imported in the background: its rows checked in the
request, annotated and stored by a task that reports progress, can be cancelled, and
records why it failed; never half-stored."""

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from cfannotate.campaigns.models import Original
from cfannotate.candidates import imports
from cfannotate.candidates.imports import (
    UNEXPECTED_FAILURE,
    candidate_import_cancel,
    candidate_import_process,
    candidate_import_start,
)
from cfannotate.candidates.models import Candidate, CandidateImport, ImportState
from cfannotate.core.exceptions import Conflict, NotFound
from tests.factories import make_campaign, make_unit

THREE_ROWS = (
    b"original_id,text\n"
    b"s01,It is not great for kids.\n"
    b"s01,It is great for nobody.\n"
    b"s02,The plot is dull and slow.\n"
)


@pytest.fixture
def import_campaign(researcher):
    campaign = make_campaign(owner=researcher)
    positive = campaign.labels.get(value="positive")
    for external_id, text in (("s01", "It is great for kids."), ("s02", "The plot is lively.")):
        Original.objects.create(
            campaign=campaign, external_id=external_id, text=text, label=positive
        )
    return campaign


def start(campaign, content: bytes = THREE_ROWS, name: str = "mine.csv") -> CandidateImport:
    return candidate_import_start(
        campaign=campaign, user=campaign.owner, file_name=name, content=content
    )


def api_url(campaign, job=None, action: str = "") -> str:
    if job is None:
        return f"/api/campaigns/{campaign.id}/candidates/import/"
    return f"/api/campaigns/{campaign.id}/candidates/imports/{job.id}/{action}"


def test_progress_is_recorded_after_each_part_and_the_file_is_dropped_at_the_end(
    import_campaign, monkeypatch
):
    monkeypatch.setattr(imports, "IMPORT_PART_ROWS", 1)
    job = start(import_campaign)
    seen = []
    annotate_part = imports.import_rows_annotate

    def watched(campaign, rows, **kwargs):
        recorded = kwargs["progress"]

        def progress(done, total):
            recorded(done, total)
            seen.append(CandidateImport.objects.values_list("rows_done", "rows_total").get())

        return annotate_part(campaign, rows, **(kwargs | {"progress": progress}))

    monkeypatch.setattr(imports, "import_rows_annotate", watched)
    assert candidate_import_process(job.id) == "done"
    assert seen == [(1, 3), (2, 3), (3, 3)]
    job.refresh_from_db()
    assert (job.state, job.imported, job.kept, job.originals) == ("done", 3, 3, 2)
    assert bytes(job.content) == b"" and job.finished_at is not None
    assert Candidate.objects.filter(campaign=import_campaign, source="imported").count() == 3
    # A second run of the same task (a retried delivery) does nothing.
    assert candidate_import_process(job.id) == "done"
    assert Candidate.objects.count() == 3


def test_a_second_import_waits_for_the_first(import_campaign, api_client, client, researcher):
    first = start(import_campaign)
    with pytest.raises(Conflict, match=r"mine\.csv is still being imported into this campaign"):
        start(import_campaign, name="other.csv")
    response = api_client.post(
        api_url(import_campaign), {"file": SimpleUploadedFile("other.csv", THREE_ROWS)}
    )
    assert response.status_code == 409
    assert "mine.csv is still being imported" in response.json()["message"]
    client.force_login(researcher)
    page = client.post(
        reverse("candidate-import", args=[import_campaign.id]),
        {"file": SimpleUploadedFile("other.csv", THREE_ROWS)},
        HTTP_HX_REQUEST="true",
    )
    assert page.status_code == 409 and "mine.csv is still being imported" in page.content.decode()
    assert CandidateImport.objects.get() == first
    # One import at a time per campaign: another campaign imports meanwhile.
    other = make_campaign(owner=researcher)
    Original.objects.create(
        campaign=other, external_id="s01", text="Fine.", label=other.labels.get(value="positive")
    )
    assert start(other, content=b"original_id,text\ns01,Not fine.\n").state == "queued"
    candidate_import_process(first.id)
    after = start(import_campaign, content=b"original_id,text\ns02,The plot is slow.\n")
    assert after.state == "queued"


def test_a_queued_import_cancelled_stores_nothing(import_campaign, api_client):
    job = start(import_campaign)
    response = api_client.post(api_url(import_campaign, job, "cancel/"))
    assert response.status_code == 200 and response.json()["state"] == "cancelled"
    assert candidate_import_process(job.id) == "cancelled"  # the worker takes it later
    job.refresh_from_db()
    assert job.state == "cancelled" and bytes(job.content) == b""
    assert not Candidate.objects.exists()
    again = api_client.post(api_url(import_campaign, job, "cancel/"))
    assert again.status_code == 409 and "has already ended (cancelled)" in again.json()["message"]
    missing = f"/api/campaigns/{import_campaign.id}/candidates/imports/{job.id + 1}/cancel/"
    assert api_client.post(missing).status_code == 404


def test_a_running_import_cancelled_stores_nothing(import_campaign, monkeypatch):
    monkeypatch.setattr(imports, "IMPORT_PART_ROWS", 1)
    job = start(import_campaign)
    annotate_part = imports.import_rows_annotate

    def cancelled_midway(campaign, rows, **kwargs):
        recorded = kwargs["progress"]

        def progress(done, total):
            if done == 2:
                candidate_import_cancel(campaign=campaign, import_id=job.id)
            recorded(done, total)

        return annotate_part(campaign, rows, **(kwargs | {"progress": progress}))

    monkeypatch.setattr(imports, "import_rows_annotate", cancelled_midway)
    assert candidate_import_process(job.id) == "cancelled"
    job.refresh_from_db()
    assert (job.state, job.rows_done, job.imported) == ("cancelled", 1, 0)
    assert not Candidate.objects.exists()


def test_a_cancel_that_comes_after_the_last_part_still_stores_nothing(import_campaign, monkeypatch):
    job = start(import_campaign)

    def cancelled_before_storing(*args, **kwargs):
        raise AssertionError("stored after a cancel")

    annotate_part = imports.import_rows_annotate

    def then_cancel(campaign, rows, **kwargs):
        annotated = annotate_part(campaign, rows, **kwargs)
        candidate_import_cancel(campaign=campaign, import_id=job.id)
        return annotated

    monkeypatch.setattr(imports, "import_rows_annotate", then_cancel)
    monkeypatch.setattr(imports, "import_rows_store", cancelled_before_storing)
    assert candidate_import_process(job.id) == "cancelled"
    assert not Candidate.objects.exists()


def test_rows_that_went_bad_while_queued_fail_the_import_with_each_row_named(
    import_campaign, client, researcher, api_client
):
    job = start(import_campaign)
    # Before a worker takes it, s02 gets a labeling unit: candidates added now would never
    # be selected, so the upload's check, run again, refuses that row.
    make_unit(import_campaign.originals.get(external_id="s02"))
    assert candidate_import_process(job.id) == "failed"
    job.refresh_from_db()
    assert job.error == "1 row is invalid; nothing was imported."
    assert job.error_fields == {
        "row 4": [
            "original_id: 's02' already has labeling units; "
            "candidates added now would never be selected."
        ]
    }
    assert bytes(job.content) == b"" and not Candidate.objects.filter(source="imported").exists()
    body = api_client.get(api_url(import_campaign, job)).json()
    assert body["state"] == "failed" and list(body["fields"]) == ["row 4"]
    client.force_login(researcher)
    page = client.get(reverse("campaign-generation", args=[import_campaign.id])).content.decode()
    assert "The import of <strong>mine.csv</strong> failed; nothing of it was imported." in page
    assert "<strong>row 4</strong>: original_id: &#x27;s02&#x27; already has labeling units" in page
    assert f'action="{reverse("candidate-import", args=[import_campaign.id])}"' in page


def test_an_unexpected_error_fails_the_import_and_stores_nothing(import_campaign, monkeypatch):
    job = start(import_campaign)

    def broken(**kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(imports, "candidates_store", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        candidate_import_process(job.id)  # the task fails too, for the worker's log
    job.refresh_from_db()
    assert (job.state, job.error) == ("failed", UNEXPECTED_FAILURE)
    assert "disk full" not in job.error and not Candidate.objects.exists()


def test_a_stalled_import_says_so_and_can_be_cancelled(
    import_campaign, client, researcher, api_client
):
    job = start(import_campaign)
    long_ago = timezone.now() - timedelta(minutes=11)
    CandidateImport.objects.filter(pk=job.pk).update(
        state=ImportState.RUNNING, started_at=long_ago, updated_at=long_ago
    )
    assert api_client.get(api_url(import_campaign, job)).json()["stalled"] is True
    client.force_login(researcher)
    progress = reverse("candidate-import-progress", args=[import_campaign.id, job.id])
    html = client.get(progress, HTTP_HX_REQUEST="true").content.decode()
    assert "No progress for over ten minutes" in html and "Cancel the import" in html
    cancel = reverse("candidate-import-cancel", args=[import_campaign.id, job.id])
    answer = client.post(cancel, HTTP_HX_REQUEST="true")
    assert answer.status_code == 200 and "was cancelled; nothing of it was imported" in (
        answer.content.decode()
    )
    assert f'hx-get="{progress}"' not in answer.content.decode()


def test_an_import_is_seen_and_cancelled_by_its_campaign_owner_only(
    import_campaign, client, other_researcher, api_client
):
    job = start(import_campaign)
    theirs = make_campaign(owner=other_researcher)
    assert api_client.get(api_url(theirs, job)).status_code == 404
    client.force_login(other_researcher)
    for url, method in (
        (reverse("candidate-import-progress", args=[import_campaign.id, job.id]), client.get),
        (reverse("candidate-import-cancel", args=[import_campaign.id, job.id]), client.post),
    ):
        assert method(url, HTTP_HX_REQUEST="true").status_code == 404
    with pytest.raises(NotFound):
        candidate_import_cancel(campaign=theirs, import_id=job.id)
    job.refresh_from_db()
    assert job.state == "queued"


def test_the_file_name_is_escaped_in_the_progress_block(import_campaign, client, researcher):
    start(import_campaign, name="<img src=x onerror=alert(1)>.csv")
    client.force_login(researcher)
    html = client.get(
        reverse("candidate-import", args=[import_campaign.id]), HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "Importing &lt;img src=x onerror=alert(1)&gt;.csv" in html
    assert "<img src=x" not in html


@pytest.mark.django_db(transaction=True)
def test_a_db_worker_takes_the_queued_import(researcher, api_client):
    """The task as deployed: queued on commit, taken by `manage.py db_worker`."""
    campaign = make_campaign(owner=researcher)
    positive = campaign.labels.get(value="positive")
    Original.objects.create(
        campaign=campaign, external_id="s01", text="It is great.", label=positive
    )
    response = api_client.post(
        api_url(campaign),
        {"file": SimpleUploadedFile("mine.csv", b"original_id,text\ns01,It is not great.\n")},
    )
    assert response.status_code == 202
    call_command("db_worker", queue_name="default", batch=True, startup_delay=False, reload=False)
    body = api_client.get(response.json()["url"]).json()
    assert (body["state"], body["imported"]) == ("done", 1)
    assert Candidate.objects.get().text == "It is not great."
