"""Live generation progress in a real browser (issue 24 item 2): the researcher starts a
run, the page counts originals as the worker reports them within its one chunk, then shows
the candidates when the run ends, all without a reload."""

import pytest

from cfannotate.candidates import runs
from cfannotate.candidates.models import Candidate, GenerationRun
from generation.models import load_causal_lm
from tests.browser.conftest import htmx_ready, log_in
from tests.factories import make_campaign, make_original, make_user
from tests.generation.tiny_models import tiny_lm_directory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Rule-based generators: no language model generates, a tiny one scores fluency.
GENERATORS = [
    {
        "name": "causal-negation",
        "source_labels": ["positive"],
        "target_label": "negative",
        "alternative": "never",
    },
    {"name": "lexicon-remove", "classifier": "vader", "min_similarity": None},
]
TEXTS = [
    ("It is great for kids.", "positive"),
    ("The film is not a bad movie.", "positive"),
    ("This dull film never finds its rhythm.", "negative"),
]


def test_progress_moves_within_a_chunk_and_the_candidates_appear_without_reload(
    live_server, page, monkeypatch, tmp_path_factory
):
    researcher = make_user("erin")
    campaign = make_campaign(
        owner=researcher, name="Live progress", settings={"generators": GENERATORS}
    )
    for text, label in TEXTS:
        make_original(campaign, text=text, label=label)
    tiny_lm = load_causal_lm(tiny_lm_directory(tmp_path_factory, "gpt2"), device="cpu")

    log_in(page, live_server.url, "erin")
    page.get_by_role("link", name="Live progress").click()
    sections = page.get_by_role("navigation", name="Campaign sections")
    sections.get_by_role("link", name="Generation", exact=True).click()
    page.get_by_text("No candidates yet").wait_for()
    htmx_ready(page)
    page.evaluate("window.__marker = 'kept'")

    page.get_by_role("button", name="Generate candidates").click()
    progress = page.locator("#generation-progress")
    progress.get_by_text("0 of 3 originals").wait_for()
    # The page's status line (never replaced, so screen readers read each change) says it.
    status = page.get_by_role("status").filter(has_text="Generation run")
    run_id = GenerationRun.objects.get(campaign=campaign).id
    assert status.inner_text() == f"Generation run {run_id}: queued."
    assert progress.get_attribute("aria-live") is None
    progress.get_by_text("waiting for a worker").wait_for()
    assert progress.get_attribute("hx-trigger") == "every 2s"

    # The worker's reports, every one written (the page polls every 2 s): after each, the
    # page shows the new count before generation goes on.
    monkeypatch.setattr(runs, "PROGRESS_INTERVAL", 0)
    report = runs._ChunkProgress.__call__
    shown = []

    def report_and_look(self, originals_done):
        report(self, originals_done)
        if originals_done < len(TEXTS):
            progress.get_by_text(f"{originals_done} of 3 originals").wait_for(timeout=10_000)
            shown.append(originals_done)

    monkeypatch.setattr(runs._ChunkProgress, "__call__", report_and_look)
    chunk = GenerationRun.objects.get(campaign=campaign).chunks.get()
    outcome = runs.generation_chunk_process(
        chunk_id=chunk.pk, lm=tiny_lm, fluency_lm=tiny_lm, worker="browser-test"
    )
    assert outcome == "done" and shown == [1, 2]

    # The run ends: polling stops, the candidates table fetches itself again.
    progress.get_by_text("Done", exact=True).wait_for(timeout=10_000)
    candidate = Candidate.objects.filter(campaign=campaign).order_by("original_id", "id").first()
    assert candidate is not None
    table = page.locator("#recent-candidates")
    table.get_by_text(candidate.text, exact=True).first.wait_for(timeout=10_000)
    assert page.locator("#generation-progress").get_attribute("hx-trigger") is None
    assert page.get_by_text("No candidates yet").count() == 0
    assert page.evaluate("window.__marker") == "kept", "the page was reloaded, not swapped"
    stored = Candidate.objects.filter(campaign=campaign).count()
    assert status.inner_text() == f"Generation run {run_id}: done. {stored} candidates stored."
    assert page.console_errors == []
