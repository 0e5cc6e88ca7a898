"""Live generation progress (issue 24 item 2): originals done within a running chunk, time
left from the rate so far, the page polling only while a run is active, and the candidates
table fetched again when the run ends, without a reload."""

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from cfannotate.candidates import runs
from cfannotate.candidates.models import ChunkState, GenerationChunk, GenerationRun, RunState
from cfannotate.candidates.runs import (
    _ChunkProgress,
    _claim,
    generation_chunk_process,
    generation_run_create,
)
from cfannotate.candidates.selectors import run_progress
from cfannotate.candidates.services import candidates_generate
from cfannotate.candidates.templatetags.generation_progress import time_left
from tests.factories import make_campaign, make_candidate, make_original


@pytest.fixture
def campaign(researcher):
    campaign = make_campaign(owner=researcher)
    for _ in range(5):
        make_original(campaign)
    return campaign


def _running(run: GenerationRun, *, seconds: float) -> None:
    """The run as a worker leaves it once it has begun `seconds` ago."""
    GenerationRun.objects.filter(pk=run.pk).update(
        state=RunState.RUNNING, started_at=timezone.now() - timedelta(seconds=seconds)
    )
    run.refresh_from_db()


def _chunk(run, index, state, originals_done=0):
    GenerationChunk.objects.filter(run=run, index=index).update(
        state=state, originals_done=originals_done
    )


def _mid_run(campaign) -> GenerationRun:
    """Chunks of 2, 2 and 1 originals: the first done, the second half done, 5 min in."""
    run = generation_run_create(campaign=campaign, chunk_size=2)
    _chunk(run, 0, ChunkState.DONE)
    _chunk(run, 1, ChunkState.RUNNING, originals_done=1)
    GenerationRun.objects.filter(pk=run.pk).update(chunks_done=1)
    _running(run, seconds=300)
    return run


# --------------------------------------------------------------------------- the figures


def test_progress_counts_originals_within_a_running_chunk(campaign):
    progress = run_progress(_mid_run(campaign))
    assert (progress.originals_done, progress.originals_total) == (3, 5)
    assert (progress.chunks_done, progress.chunks_running, progress.percent) == (1, 1, 60)


def test_time_left_is_the_originals_left_at_the_rate_so_far(campaign):
    progress = run_progress(_mid_run(campaign))
    # 3 originals in 300 s: the 2 left take about 200 s more (give or take the test's own).
    assert progress.seconds_left == pytest.approx(200, abs=10)
    assert progress.eta_seconds == progress.seconds_left


def test_time_left_is_unknown_until_an_original_is_done_and_after_the_end(campaign):
    run = generation_run_create(campaign=campaign, chunk_size=2)
    assert run_progress(run).seconds_left is None  # queued
    _chunk(run, 0, ChunkState.RUNNING)
    _running(run, seconds=100)
    assert run_progress(run).seconds_left is None  # running, nothing done yet
    _chunk(run, 0, ChunkState.RUNNING, originals_done=1)
    assert run_progress(run).seconds_left == pytest.approx(400, abs=20)
    GenerationChunk.objects.filter(run=run).update(state=ChunkState.DONE)
    GenerationRun.objects.filter(pk=run.pk).update(
        state=RunState.DONE, chunks_done=3, finished_at=timezone.now()
    )
    run.refresh_from_db()
    progress = run_progress(run)
    assert progress.seconds_left is None and progress.originals_done == 5
    assert progress.percent == 100


def test_cancelled_chunks_leave_the_total_and_a_report_past_the_chunk_is_capped(campaign):
    run = generation_run_create(campaign=campaign, chunk_size=2)
    _chunk(run, 0, ChunkState.RUNNING, originals_done=9)
    _chunk(run, 2, ChunkState.CANCELLED)
    _running(run, seconds=5)
    progress = run_progress(run)
    assert (progress.originals_done, progress.originals_total) == (2, 4)
    assert progress.originals_cancelled == 1


@pytest.mark.parametrize(
    ("seconds", "words"),
    [(None, ""), (0.2, "1 s"), (45, "45 s"), (120, "2 min"), (130, "2 min 10 s"),
     (3600, "1 h"), (3720, "1 h 2 min")],
)  # fmt: skip
def test_time_left_in_words(seconds, words):
    assert time_left(seconds) == words


# --------------------------------------------------------------------------- the worker's reports


def test_generation_reports_originals_done_as_each_generator_goes(two_generator_campaign, tiny_lm):
    seen = []
    originals = list(two_generator_campaign.originals.select_related("label").order_by("id"))
    candidates_generate(
        campaign=two_generator_campaign,
        originals=originals,
        lm=tiny_lm,
        fluency_lm=tiny_lm,
        on_progress=seen.append,
    )
    # Two generators over three originals: one original's worth per two passes.
    assert seen == [1, 2, 3]


def test_a_running_chunk_records_its_originals_done(two_generator_campaign, tiny_lm, monkeypatch):
    monkeypatch.setattr(runs, "PROGRESS_INTERVAL", 0)
    run = generation_run_create(campaign=two_generator_campaign, chunk_size=3)
    chunk = run.chunks.get()
    recorded = []
    write = _ChunkProgress.__call__

    def spy(self, originals_done):
        write(self, originals_done)
        recorded.append(GenerationChunk.objects.get(pk=chunk.pk).originals_done)

    monkeypatch.setattr(_ChunkProgress, "__call__", spy)
    assert (
        generation_chunk_process(chunk_id=chunk.pk, lm=tiny_lm, fluency_lm=tiny_lm, worker="test")
        == "done"
    )
    assert recorded == [1, 2, 3]
    run.refresh_from_db()
    assert run.state == RunState.DONE and run_progress(run).originals_done == 3


def test_reports_are_written_once_a_second_and_renew_the_lease(campaign):
    run = generation_run_create(campaign=campaign, chunk_size=5)
    chunk = _claim(run.chunks.get().pk, "test")
    GenerationChunk.objects.filter(pk=chunk.pk).update(lease_expires_at=timezone.now())
    report = _ChunkProgress(chunk)
    report(1)
    report(2)  # within the second: not written
    chunk.refresh_from_db()
    assert chunk.originals_done == 1
    assert chunk.lease_expires_at > timezone.now() + runs.CHUNK_LEASE - timedelta(minutes=1)
    report(5)  # the last original is written at once
    chunk.refresh_from_db()
    assert chunk.originals_done == 5


def test_an_attempt_that_lost_its_chunk_writes_nothing(campaign):
    run = generation_run_create(campaign=campaign, chunk_size=5)
    stale = _claim(run.chunks.get().pk, "dead")
    GenerationChunk.objects.filter(pk=stale.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    _claim(stale.pk, "alive")  # taken over: attempts is now 2, originals_done back to 0
    _ChunkProgress(stale)(4)
    assert GenerationChunk.objects.get(pk=stale.pk).originals_done == 0


# --------------------------------------------------------------------------- the page


def test_the_progress_polls_while_running_and_says_originals_and_time_left(
    client, researcher, campaign
):
    run = _mid_run(campaign)
    client.force_login(researcher)
    response = client.get(reverse("run-progress", args=[campaign.id]), HTTP_HX_REQUEST="true")
    html = response.content.decode()
    poll = f"{reverse('run-progress', args=[campaign.id])}?watching={run.id}"
    assert 'hx-trigger="every 2s"' in html and poll in html
    assert "3 of 5 originals" in html
    assert re.search(r"about 3 min 2\d s left", html)  # 200 s, and the test's own seconds
    assert "HX-Trigger" not in response.headers


def test_a_queued_run_says_it_waits_for_a_worker(client, researcher, campaign):
    generation_run_create(campaign=campaign)
    client.force_login(researcher)
    url = reverse("run-progress", args=[campaign.id])
    html = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert 'hx-trigger="every 2s"' in html
    assert "0 of 5 originals" in html and "waiting for a worker" in html


def test_the_poll_that_finds_the_run_ended_stops_and_refreshes_the_candidates(
    client, researcher, campaign
):
    run = _mid_run(campaign)
    GenerationRun.objects.filter(pk=run.pk).update(state=RunState.DONE, finished_at=timezone.now())
    client.force_login(researcher)
    url = reverse("run-progress", args=[campaign.id])
    response = client.get(url, {"watching": run.id}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert 'hx-trigger="every 2s"' not in html and "Generate again for all 5" in html
    # What a finished run took, not a rate of chunks; "stored" is said while it runs.
    words = " ".join(html.split())
    assert "· 0 candidates · took 5 min" in words and "chunks/min" not in words
    assert response.headers["HX-Trigger"] == '{"candidates-changed": {}}'
    # A page opened after the end was not watching: nothing to refresh.
    assert "HX-Trigger" not in client.get(url, HTTP_HX_REQUEST="true").headers


def test_a_cancelled_run_is_watched_until_its_running_chunk_ends(client, researcher, campaign):
    run = _mid_run(campaign)  # chunk 1 runs under a worker's lease
    GenerationChunk.objects.filter(run=run, index=1).update(
        lease_expires_at=timezone.now() + timedelta(minutes=5)
    )
    runs.generation_run_cancel(run=run)
    client.force_login(researcher)
    url = reverse("run-progress", args=[campaign.id])

    response = client.get(url, {"watching": run.id}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert 'hx-trigger="every 2s"' in html and "Generate " not in html
    words = " ".join(html.split())
    assert "candidates stored (a chunk stores its candidates when it ends)" in words
    assert "1 chunk a worker had already started finishes and keeps its candidates" in words
    assert "HX-Trigger" not in response.headers

    # The chunk ends: the next poll stops and the candidates table fetches itself again.
    _chunk(run, 1, ChunkState.DONE, originals_done=2)
    response = client.get(url, {"watching": run.id}, HTTP_HX_REQUEST="true")
    assert 'hx-trigger="every 2s"' not in response.content.decode()
    assert response.headers["HX-Trigger"] == '{"candidates-changed": {}}'


def test_a_cancelled_runs_chunk_whose_worker_died_is_not_waited_for(campaign):
    run = _mid_run(campaign)
    GenerationChunk.objects.filter(run=run, index=1).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    runs.generation_run_cancel(run=run)
    progress = run_progress(GenerationRun.objects.get(pk=run.pk))
    assert progress.chunks_running == 0 and progress.chunks_finishing == 0
    assert not progress.active
    # No worker holds it: cancelling drops it with the queued ones.
    assert run.chunks.get(index=1).state == ChunkState.CANCELLED


def test_the_campaign_page_listens_for_the_end_of_a_run(client, researcher, campaign):
    client.force_login(researcher)
    html = client.get(reverse("campaign-generation", args=[campaign.id])).content.decode()
    assert 'id="recent-candidates"' in html
    assert reverse("candidates-recent", args=[campaign.id]) in html
    assert 'hx-trigger="candidates-changed from:body"' in html
    assert "No candidates yet" in html


def test_the_candidates_table_fetched_again_shows_the_new_candidates(
    client, researcher, other_researcher, campaign
):
    make_candidate(campaign.originals.first(), text="A brand new counterfactual.")
    url = reverse("candidates-recent", args=[campaign.id])
    client.force_login(other_researcher)
    assert client.get(url).status_code == 404
    client.force_login(researcher)
    html = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert 'id="recent-candidates"' in html
    assert "A brand new counterfactual." in html and "Review the 1 candidate:" in html


def test_the_api_progress_carries_originals_and_time_left(api_client, campaign):
    _mid_run(campaign)
    body = api_client.get(f"/api/campaigns/{campaign.id}/generation/").json()
    assert (body["originals_done"], body["originals_total"]) == (3, 5)
    assert body["seconds_left"] == pytest.approx(200, abs=10)
