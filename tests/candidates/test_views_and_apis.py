"""Generation runs and candidate imports from the campaign page (htmx) and the API;
owner-scoped, clear errors."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from cfannotate.campaigns.models import Original
from cfannotate.candidates.models import (
    Candidate,
    CandidateImport,
    CandidateStatus,
    GenerationRun,
    RunState,
)
from cfannotate.candidates.runs import generation_run_create
from cfannotate.candidates.tasks import import_candidates
from tests.factories import make_campaign, make_candidate, make_original


@pytest.fixture
def campaign(researcher):
    campaign = make_campaign(owner=researcher)
    for _ in range(3):
        make_original(campaign)
    return campaign


def test_start_shows_live_progress_and_cancel(
    client, researcher, campaign, django_capture_on_commit_callbacks
):
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("run-start", args=[campaign.id]), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    html = response.content.decode()
    run = GenerationRun.objects.get(campaign=campaign)
    assert 'hx-trigger="every 2s"' in html and "0 of 1 chunk done" in html
    assert reverse("run-cancel", args=[campaign.id, run.id]) in html
    again = client.post(reverse("run-start", args=[campaign.id]), HTTP_HX_REQUEST="true")
    assert again.status_code == 409 and "already has a generation run" in again.content.decode()
    cancelled = client.post(
        reverse("run-cancel", args=[campaign.id, run.id]), HTTP_HX_REQUEST="true"
    )
    assert "Cancelled" in cancelled.content.decode()
    # The chunk was still queued: its originals are counted, as not started.
    assert re.search(
        r"0 of\s+3 originals</strong> ·\s+3 not started when the run was cancelled",
        cancelled.content.decode(),
    )
    assert 'hx-trigger="every 2s"' not in cancelled.content.decode()  # polling stops


def test_run_pages_are_owner_scoped_and_post_only(client, other_researcher, researcher, campaign):
    client.force_login(other_researcher)
    assert client.post(reverse("run-start", args=[campaign.id])).status_code == 404
    progress = reverse("run-progress", args=[campaign.id])
    assert client.get(progress, HTTP_HX_REQUEST="true").status_code == 404
    assert client.get(progress).status_code == 404
    client.force_login(researcher)
    assert client.get(reverse("run-start", args=[campaign.id])).status_code == 405
    assert client.get(progress, HTTP_HX_REQUEST="true").status_code == 200


def test_campaign_page_shows_the_progress_block(client, researcher, campaign):
    client.force_login(researcher)
    html = client.get(reverse("campaign-generation", args=[campaign.id])).content.decode()
    assert 'id="generation-progress"' in html and "Generate candidates" in html


def test_api_start_progress_cancel_retry(api_client, campaign, django_capture_on_commit_callbacks):
    base = f"/api/campaigns/{campaign.id}/generation/"
    assert api_client.get(base).status_code == 404
    with django_capture_on_commit_callbacks(execute=True):
        started = api_client.post(base + "start/", {"chunk_size": 2}, format="json")
    assert started.status_code == 201
    body = started.json()
    assert (body["state"], body["chunks_total"], body["percent"]) == ("queued", 2, 0)
    assert api_client.get(base).json()["run"] == body["run"]
    cancelled = api_client.post(f"{base}{body['run']}/cancel/")
    assert cancelled.json()["state"] == RunState.CANCELLED
    retry = api_client.post(f"{base}{body['run']}/retry/")
    assert retry.status_code == 409 and "no failed chunks" in retry.json()["message"]


def test_api_rejects_bad_chunk_size(api_client, campaign):
    response = api_client.post(
        f"/api/campaigns/{campaign.id}/generation/start/", {"chunk_size": 0}, format="json"
    )
    assert response.status_code == 400 and "chunk_size" in response.json()["fields"]


def test_api_refuses_original_ids_of_no_original_of_the_campaign(api_client, campaign):
    foreign = make_original(make_campaign())
    mine = campaign.originals.first()
    response = api_client.post(
        f"/api/campaigns/{campaign.id}/generation/start/",
        {"original_ids": [mine.pk, foreign.pk, 123456]},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["fields"] == {
        "original_ids": [
            f"No original {foreign.pk} in this campaign.",
            "No original 123456 in this campaign.",
        ]
    }
    assert not GenerationRun.objects.exists()


def test_api_names_at_most_ten_unknown_original_ids(api_client, campaign):
    response = api_client.post(
        f"/api/campaigns/{campaign.id}/generation/start/",
        {"original_ids": list(range(900_000, 900_025))},
        format="json",
    )
    problems = response.json()["fields"]["original_ids"]
    assert len(problems) == 11 and problems[-1] == "And 15 more."
    assert response.json()["message"].startswith("25 original ids of original_ids are not")


@pytest.mark.parametrize("action", ["cancel", "retry"])
def test_api_run_actions_name_a_run_of_no_such_campaign(api_client, campaign, action):
    foreign = GenerationRun.objects.create(campaign=make_campaign(), chunk_size=1)
    base = f"/api/campaigns/{campaign.id}/generation/"
    for run_id in (foreign.pk, 99999):
        response = api_client.post(f"{base}{run_id}/{action}/")
        assert response.status_code == 404
        assert response.json()["message"] == f"No generation run {run_id} in this campaign."
    assert GenerationRun.objects.get(pk=foreign.pk).state == RunState.QUEUED


# -- importing candidates --------------------------------------------------------------------

IMPORT_CSV = b"original_id,text,intended_label\ns01,It is not great for kids.,negative\n"


@pytest.fixture
def import_campaign(researcher):
    campaign = make_campaign(owner=researcher)
    Original.objects.create(
        campaign=campaign,
        external_id="s01",
        text="It is great for kids.",
        label=campaign.labels.get(value="positive"),
    )
    return campaign


def _upload(content: bytes, name: str = "mine.csv") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="text/csv")


def test_api_refuses_two_files_in_one_request(api_client, import_campaign):
    for kind in ("import", "predictions"):
        response = api_client.post(
            f"/api/campaigns/{import_campaign.id}/candidates/{kind}/",
            {"file": [_upload(IMPORT_CSV), _upload(IMPORT_CSV, "other.csv")]},
            format="multipart",
        )
        assert response.status_code == 400 and list(response.json()["fields"]) == ["file"]
    assert not Candidate.objects.exists()


def test_api_imports_a_file(api_client, import_campaign, django_capture_on_commit_callbacks):
    url = f"/api/campaigns/{import_campaign.id}/candidates/import/"
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.post(url, {"file": _upload(IMPORT_CSV)}, format="multipart")
    assert response.status_code == 202, response.json()
    body = response.json()
    assert (body["state"], body["rows_total"], body["rows_done"], body["imported"]) == (
        "queued",
        1,
        0,
        0,
    )
    assert response["Location"] == body["url"]
    assert body["message"] == (
        "mine.csv: 1 row, all valid; waiting for a worker of the default queue to annotate "
        "and store them."
    )
    assert body["url"].endswith(
        f"/api/campaigns/{import_campaign.id}/candidates/imports/{body['id']}/"
    )
    assert not Candidate.objects.exists()  # the background task stores them
    task = DBTaskResult.objects.get(task_path="cfannotate.candidates.tasks.import_candidates")
    assert task.queue_name == "default" and task.args_kwargs["args"] == [body["id"]]
    assert import_candidates.call(body["id"]) == "done"  # what the db_worker runs
    done = api_client.get(body["url"]).json()
    assert {key: done[key] for key in ("state", "rows_done", "imported", "kept", "originals")} == {
        "state": "done",
        "rows_done": 1,
        "imported": 1,
        "kept": 1,
        "originals": 1,
    }
    assert done["message"].startswith(
        "Imported 1 candidate for 1 original from mine.csv. Labeling units are being built"
    )
    candidate = Candidate.objects.get()
    assert (candidate.source, candidate.control_code) == ("imported", "negation")


def test_api_import_errors_are_per_row_and_owner_scoped(
    api_client, import_campaign, other_researcher
):
    url = f"/api/campaigns/{import_campaign.id}/candidates/import/"
    bad = b"original_id,text,intended_label\ns01,It is great for kids.,\ns02,Other.,meh\n"
    response = api_client.post(url, {"file": _upload(bad)}, format="multipart")
    assert response.status_code == 400
    body = response.json()
    assert body["message"] == "2 rows are invalid; nothing was imported."
    assert set(body["fields"]) == {"row 2", "row 3"}
    missing = api_client.post(url, {}, format="multipart")
    assert missing.status_code == 400 and "file" in missing.json()["fields"]
    columns = api_client.post(url, {"file": _upload(b"id,sentence\ns01,x\n")}, format="multipart")
    assert columns.status_code == 400 and "columns" in columns.json()["fields"]
    theirs = make_campaign(owner=other_researcher)
    other = f"/api/campaigns/{theirs.id}/candidates/import/"
    assert api_client.post(other, {"file": _upload(IMPORT_CSV)}).status_code == 404
    assert not Candidate.objects.exists()


def test_api_refuses_a_file_too_large_unread(api_client, import_campaign, monkeypatch):
    from cfannotate.candidates import uploads

    monkeypatch.setattr(uploads, "MAX_UPLOAD_BYTES", 10)
    url = f"/api/campaigns/{import_campaign.id}/candidates/import/"
    response = api_client.post(url, {"file": _upload(IMPORT_CSV)}, format="multipart")
    assert response.status_code == 400 and "the limit is 10" in response.json()["message"]


def test_a_latin1_or_too_wide_file_is_refused_by_the_api_and_the_page(
    api_client, client, researcher, import_campaign
):
    latin1 = "original_id,text\ns01,It is not great for kids, même.\n".encode("latin-1")
    wide = ("original_id,text," + ",".join(f"c{n}" for n in range(199)) + "\n").encode()
    api = f"/api/campaigns/{import_campaign.id}/candidates/import/"
    page = reverse("candidate-import", args=[import_campaign.id])
    client.force_login(researcher)

    response = api_client.post(api, {"file": _upload(latin1)}, format="multipart")
    assert response.status_code == 400
    body = response.json()
    assert body["message"].startswith("The file is not UTF-8 text: line 2 has the byte 0xEA")
    assert "Save As → CSV UTF-8" in body["message"] and "line 2" in body["fields"]
    html = client.post(page, {"file": _upload(latin1)}, HTTP_HX_REQUEST="true").content.decode()
    assert "line 2 has the byte 0xEA" in html and "Save As → CSV UTF-8" in html

    response = api_client.post(api, {"file": _upload(wide + b"s01,x\n")}, format="multipart")
    assert response.status_code == 400
    assert response.json()["fields"] == {"columns": ["201 columns; at most 200."]}
    html = client.post(page, {"file": _upload(wide)}, HTTP_HX_REQUEST="true").content.decode()
    assert "The file has 201 columns; the limit is 200." in html
    assert not Candidate.objects.exists()


def test_campaign_page_has_the_upload_form(client, researcher, import_campaign):
    client.force_login(researcher)
    html = client.get(reverse("campaign-generation", args=[import_campaign.id])).content.decode()
    assert 'id="candidate-import"' in html
    assert f'hx-post="{reverse("candidate-import", args=[import_campaign.id])}"' in html


def test_upload_form_shows_the_import_then_reloads_the_page_when_it_is_done(
    client, researcher, import_campaign
):
    client.force_login(researcher)
    url = reverse("candidate-import", args=[import_campaign.id])
    response = client.post(url, {"file": _upload(IMPORT_CSV)}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    job = CandidateImport.objects.get()
    html = response.content.decode()
    progress = reverse("candidate-import-progress", args=[import_campaign.id, job.id])
    assert f'hx-get="{progress}"' in html and "Importing mine.csv" in html
    assert "0 of 1 row annotated" in html and "Cancel the import" in html
    assert not Candidate.objects.exists()
    still = client.get(progress, HTTP_HX_REQUEST="true")
    assert "HX-Refresh" not in still and f'hx-get="{progress}"' in still.content.decode()
    import_candidates.call(job.id)
    done = client.get(progress, HTTP_HX_REQUEST="true")
    assert done.status_code == 200 and done["HX-Refresh"] == "true"
    assert Candidate.objects.filter(source="imported").count() == 1
    page = client.get(reverse("campaign-generation", args=[import_campaign.id])).content.decode()
    assert "Imported 1 candidate for 1 original from mine.csv" in page
    assert "Last import: mine.csv, 1 candidate for" in page and f'hx-get="{progress}"' not in page


def test_the_upload_forms_refuse_two_files_in_one_post(client, researcher, import_campaign):
    """Django's file input keeps the last of two files without a word."""
    client.force_login(researcher)
    for name in ("candidate-import", "candidate-predictions"):
        response = client.post(
            reverse(name, args=[import_campaign.id]),
            {"file": [_upload(IMPORT_CSV), _upload(IMPORT_CSV, "other.csv")]},
            HTTP_HX_REQUEST="true",
        )
        assert response.status_code == 400
        assert "Send one file at a time; this request has 2" in response.content.decode()
    assert not Candidate.objects.exists()


def test_upload_form_shows_row_errors_in_place(client, researcher, import_campaign):
    client.force_login(researcher)
    url = reverse("candidate-import", args=[import_campaign.id])
    bad = _upload(b"original_id,text\ns01,It is great for kids.\n<script>s77</script>,x\n")
    response = client.post(url, {"file": bad}, HTTP_HX_REQUEST="true")
    assert response.status_code == 400  # htmx swaps 4xx answers (base.html responseHandling)
    html = response.content.decode()
    assert 'id="candidate-import"' in html and 'role="alert"' in html
    assert "<strong>row 2</strong>: text: The same as the original" in html
    assert "<strong>row 3</strong>: original_id: No original &#x27;&lt;script&gt;s77" in html
    assert "<script>s77" not in html
    plain = client.post(url, {"file": _upload(b"original_id,text\ns77,x\n")})
    assert plain.status_code == 400 and "1 row is invalid" in plain.content.decode()
    empty = client.post(url, {}, HTTP_HX_REQUEST="true")
    assert "Choose a CSV or JSONL file" in empty.content.decode()
    assert not Candidate.objects.exists()


def test_upload_form_is_owner_scoped(client, other_researcher, researcher, import_campaign):
    url = reverse("candidate-import", args=[import_campaign.id])
    client.force_login(other_researcher)
    assert client.get(url).status_code == 404
    assert client.post(url, {"file": _upload(IMPORT_CSV)}).status_code == 404
    client.force_login(researcher)
    assert client.get(url, HTTP_HX_REQUEST="true").status_code == 200
    assert client.put(url).status_code == 405
    assert not Candidate.objects.exists()


def test_a_plain_form_post_redirects_to_the_generation_page(client, researcher, import_campaign):
    client.force_login(researcher)
    url = reverse("candidate-import", args=[import_campaign.id])
    response = client.post(url, {"file": _upload(IMPORT_CSV)}, follow=True)
    assert response.redirect_chain == [
        (reverse("campaign-generation", args=[import_campaign.id]), 303)
    ]
    html = response.content.decode()
    assert "mine.csv: 1 row, all valid; being annotated" in html and "Importing mine.csv" in html


# --------------------------------------------------------------------------- per original


def _none_kept(campaign):
    """One original with a kept candidate; one whose 3 candidates all failed fluency."""

    kept, failed, _fresh = campaign.originals.order_by("id")
    make_candidate(kept)
    for _ in range(3):
        make_candidate(
            failed, status=CandidateStatus.FILTERED, metadata={"dropped_by": "fluency_full"}
        )
    return kept, failed


def test_generation_page_counts_gold_answers_apart(client, researcher, campaign):
    """The overview counts candidates without gold rounds' answers; the generation page
    says which of its counts hold them, so the two pages agree."""
    _, _, fresh = campaign.originals.order_by("id")
    _none_kept(campaign)
    make_candidate(fresh, "A written answer.", status=CandidateStatus.GOLD)
    client.force_login(researcher)
    html = client.get(reverse("campaign-generation", args=[campaign.id])).content.decode()
    html = " ".join(html.split())
    assert "1 of 3 have usable candidates; 1 holds only gold and training answers;" in html
    assert "Review all 5 candidates (1 of them gold and training answers)" in html
    recent = client.get(reverse("candidates-recent", args=[campaign.id]), HTTP_HX_REQUEST="true")
    recent = " ".join(recent.content.decode().split())
    assert "Review all 5 candidates (1 of them gold and training answers)" in recent


def test_campaign_page_says_why_an_original_has_none_and_offers_a_retry(
    client, researcher, campaign, django_capture_on_commit_callbacks
):
    _, failed = _none_kept(campaign)
    failed.text = "<script>alert(1)</script> great"
    failed.save()
    client.force_login(researcher)
    html = client.get(reverse("campaign-generation", args=[campaign.id])).content.decode()
    assert "1 of 3 have usable" in html and "1 came out with none" in html
    # One never generated is the Generate button's work, not a failure to list.
    assert "all 3 failed the fluency filter" in html and "1 not generated yet" in html
    assert "&lt;script&gt;" in html and "<script>alert" not in html
    assert reverse("campaign-settings", args=[campaign.id]) in html
    assert "Retry with other settings" in html
    assert f'name="original" value="{failed.pk}"' in html
    with django_capture_on_commit_callbacks(execute=True):
        retried = client.post(
            reverse("run-start", args=[campaign.id]),
            {"original": [failed.pk]},
            HTTP_HX_REQUEST="true",
        )
    assert retried.status_code == 200
    run = GenerationRun.objects.get(campaign=campaign)
    assert [chunk.original_ids for chunk in run.chunks.all()] == [[failed.pk]]


def test_retry_refuses_ids_that_are_not_numbers(client, researcher, campaign):
    client.force_login(researcher)
    response = client.post(reverse("run-start", args=[campaign.id]), {"original": ["x"]})
    assert response.status_code == 400 and "Original ids are numbers" in response.content.decode()
    assert not GenerationRun.objects.filter(campaign=campaign).exists()


def test_api_generation_status_per_original(api_client, campaign):
    kept, failed = _none_kept(campaign)
    url = f"/api/campaigns/{campaign.id}/generation-status/"
    body = api_client.get(url).json()
    assert body["count"] == 3
    first, second, third = body["results"]
    assert (first["original"], first["kept"], first["why"]) == (kept.pk, 1, "")
    assert first["rewrites"] == 0
    assert second["dropped"] == [
        {"reason": "fluency_full", "label": "much less fluent than the original", "count": 3}
    ]
    assert second["why"] == "all 3 failed the fluency filter" and second["filtered"] == 3
    assert (third["state"], third["why"]) == ("not_generated", "not generated yet")
    empty = api_client.get(url, {"empty": "true"}).json()
    assert [item["original"] for item in empty["results"]] == [failed.pk, third["original"]]
    assert api_client.get(url, {"empty": "maybe"}).status_code == 400


def test_api_generation_status_says_which_skips_were_not_for_the_label(api_client, campaign):
    kept, _, _ = campaign.originals.order_by("id")
    make_candidate(kept)
    run = GenerationRun.objects.create(campaign=campaign, chunk_size=3, chunks_total=1)
    skip = {"generator": "causal-strengthen", "reason": "label 'causal' is not one it converts"}
    run.chunks.create(
        index=0,
        original_ids=[kept.pk],
        state="done",
        outcomes={str(kept.pk): {"made": 1, "skipped": [{**skip, "not_for_label": True}]}},
    )
    url = f"/api/campaigns/{campaign.id}/generation-status/"
    first = api_client.get(url).json()["results"][0]
    assert first["skipped"] == [{**skip, "not_for_label": True}]


def test_api_generation_status_is_owner_scoped(api_client, other_researcher, campaign):
    from rest_framework.test import APIClient

    other = APIClient()
    other.force_authenticate(other_researcher)
    url = f"/api/campaigns/{campaign.id}/generation-status/"
    assert other.get(url).status_code == 404
    assert APIClient().get(url).status_code in (401, 403)


def test_api_start_for_some_originals(api_client, campaign, django_capture_on_commit_callbacks):
    one = campaign.originals.order_by("id").first()
    with django_capture_on_commit_callbacks(execute=True):
        started = api_client.post(
            f"/api/campaigns/{campaign.id}/generation/start/",
            {"original_ids": [one.pk]},
            format="json",
        )
    assert started.status_code == 201 and started.json()["chunks_total"] == 1
    run = GenerationRun.objects.get(campaign=campaign)
    assert run.chunks.get().original_ids == [one.pk]


def test_a_campaign_generated_for_some_originals_offers_the_rest_first(
    client, researcher, campaign, django_capture_on_commit_callbacks
):
    """The demo generates for 3 of its 40 originals: the page offered only "Generate
    candidates", which starts over for all 40. It now offers the ones not generated yet
    first, and all of them again second."""
    first, *rest = campaign.originals.order_by("id")
    make_candidate(first, "It is not great.")
    client.force_login(researcher)
    page = client.get(reverse("campaign-generation", args=[campaign.id])).content.decode()
    assert "Generate for the 2 not generated yet" in page
    assert "Generate again for all 3" in page

    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(
            reverse("run-start", args=[campaign.id]),
            {"scope": "not_generated"},
            HTTP_HX_REQUEST="true",
        )
    assert answer.status_code == 200
    (chunk,) = GenerationRun.objects.get(campaign=campaign).chunks.all()
    assert sorted(chunk.original_ids) == sorted(original.pk for original in rest)


def test_an_unknown_scope_is_refused_on_the_page(client, researcher, campaign):
    client.force_login(researcher)
    response = client.post(
        reverse("run-start", args=[campaign.id]), {"scope": "everything"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 400 and "scope is not_generated" in response.content.decode()
    assert not GenerationRun.objects.filter(campaign=campaign).exists()


def test_asking_for_the_originals_not_generated_when_there_are_none_is_refused(
    api_client, campaign
):
    base = f"/api/campaigns/{campaign.id}/generation/start/"
    for original in campaign.originals.all():
        make_candidate(original, "It is not great.")
    refused = api_client.post(base, {"not_generated_only": True}, format="json")
    assert refused.status_code == 400
    assert "Every original has been generated already" in refused.json()["message"]
    both = api_client.post(
        base,
        {"not_generated_only": True, "original_ids": [campaign.originals.first().pk]},
        format="json",
    )
    assert both.status_code == 400 and "original_ids" in both.json()["fields"]
    assert not GenerationRun.objects.filter(campaign=campaign).exists()


@pytest.mark.parametrize("htmx", [True, False])
def test_asking_for_the_rest_while_a_run_is_queued_says_a_run_is_in_progress(
    client, researcher, campaign, htmx
):
    """A queued run's originals are not "not generated"; the answer was that every original
    had been generated already, before anything was."""
    generation_run_create(campaign=campaign)
    client.force_login(researcher)

    answer = client.post(
        reverse("run-start", args=[campaign.id]),
        {"scope": "not_generated"},
        **({"HTTP_HX_REQUEST": "true"} if htmx else {}),
    )

    html = answer.content.decode()
    assert answer.status_code == 409
    assert "already has a generation run in progress" in html
    assert "Every original has been generated already" not in html
    assert GenerationRun.objects.filter(campaign=campaign).count() == 1


def test_original_ids_in_other_digits_are_refused_in_words(client, researcher, campaign):
    client.force_login(researcher)
    for value in ("\u00b2", "\u0661"):  # int() fails on the first, reads the second as 1
        answer = client.post(
            reverse("run-start", args=[campaign.id]), {"original": value}, HTTP_HX_REQUEST="true"
        )
        assert answer.status_code == 400 and "Original ids are numbers." in answer.text
    assert not GenerationRun.objects.filter(campaign=campaign).exists()


def test_the_api_generates_for_the_originals_not_generated_yet(api_client, campaign):
    first, *rest = campaign.originals.order_by("id")
    make_candidate(first, "It is not great.")
    started = api_client.post(
        f"/api/campaigns/{campaign.id}/generation/start/",
        {"not_generated_only": True},
        format="json",
    )
    assert started.status_code == 201
    run = GenerationRun.objects.get(campaign=campaign)
    ids = [pk for chunk in run.chunks.all() for pk in chunk.original_ids]
    assert sorted(ids) == sorted(original.pk for original in rest)


def test_a_campaign_with_only_gold_answers_is_offered_plain_generation(
    client, researcher, campaign
):
    """A gold round's answers are candidates too, but nothing was generated: "Generate
    again for all" would be wrong there."""
    from cfannotate.candidates.models import CandidateStatus

    make_candidate(campaign.originals.first(), "It is bad.", status=CandidateStatus.GOLD)
    client.force_login(researcher)
    page = client.get(reverse("campaign-generation", args=[campaign.id])).content.decode()
    assert "Generate candidates" in page
    assert "not generated yet</button>" not in page and "Generate again for all" not in page
