"""Reads of candidates: what generation made of each original, and why nothing came out."""

import pytest

from cfannotate.candidates.models import (
    CandidateSource,
    CandidateStatus,
    ChunkState,
    ControlCode,
    GenerationChunk,
    GenerationRun,
)
from cfannotate.candidates.runs import generation_chunk_process, generation_run_create
from cfannotate.candidates.selectors import (
    CandidateFilters,
    GenerationState,
    candidate_counts,
    candidates_filtered,
    generation_overview,
    generation_status,
    recent_candidates,
)
from tests.factories import make_campaign, make_candidate, make_original


@pytest.fixture
def campaign(researcher):
    return make_campaign(owner=researcher)


def dropped(original, reason: str, count: int) -> None:
    for _ in range(count):
        make_candidate(original, status=CandidateStatus.FILTERED, metadata={"dropped_by": reason})


def chunk_done(campaign, originals, outcomes=None, state=ChunkState.DONE, error=""):
    run = GenerationRun.objects.create(campaign=campaign, chunk_size=10, chunks_total=1)
    return GenerationChunk.objects.create(
        run=run,
        index=0,
        original_ids=[original.pk for original in originals],
        state=state,
        outcomes=outcomes or {},
        error=error,
    )


def status_of(campaign, original):
    (status,) = generation_status(campaign, original_ids=[original.pk])
    return status


def test_all_failed_the_fluency_filter(campaign):
    original = make_original(campaign)
    dropped(original, "fluency_full", 10)
    dropped(original, "fluency_changed", 8)
    chunk_done(campaign, [original], {str(original.pk): {"made": 18, "skipped": []}})
    status = status_of(campaign, original)
    assert (status.kept, status.filtered, status.made) == (0, 18, 18)
    assert status.state == GenerationState.GENERATED
    assert [(d.reason, d.count) for d in status.dropped] == [
        ("fluency_full", 10),
        ("fluency_changed", 8),
    ]
    assert status.dropped[0].label == "much less fluent than the original"
    assert status.why == "all 18 failed the fluency filter"


def test_mixed_filters_most_first(campaign):
    original = make_original(campaign)
    dropped(original, "truncated", 12)
    dropped(original, "fluency_full", 6)
    assert (
        status_of(campaign, original).why == "12 cut off mid-sentence, 6 failed the fluency filter"
    )
    assert status_of(campaign, original).header == "0 kept · 12 cut off · 6 fluency · 0 selected"


def test_skipped_by_the_generator(campaign):
    original = make_original(campaign)
    reason = "matches none of the slices preposition"
    chunk_done(
        campaign,
        [original],
        {str(original.pk): {"made": 0, "skipped": [{"generator": "polyjuice", "reason": reason}]}},
    )
    status = status_of(campaign, original)
    assert [(s.generator, s.reason) for s in status.skipped] == [("polyjuice", reason)]
    assert status.why == f"not perturbed: {reason}"


def test_a_generator_not_for_the_label_is_left_out_of_the_header(campaign):
    """causal-strengthen tried nothing on a causal sentence: the header does not say it
    "did not perturb" it; why an original got nothing still names every skip."""
    original = make_original(campaign)
    make_candidate(original)
    not_for_label = {
        "generator": "causal-strengthen",
        "reason": "label 'causal' is not one causal-strengthen converts (conditional_causal)",
        "not_for_label": True,
    }
    tried = {"generator": "polyjuice", "reason": "matches none of the slices preposition"}
    chunk_done(campaign, [original], {str(original.pk): {"made": 1, "skipped": [not_for_label]}})
    status = status_of(campaign, original)
    assert status.skipped[0].not_for_label
    assert status.header == "1 kept · 0 selected"
    chunk_done(
        campaign, [original], {str(original.pk): {"made": 1, "skipped": [not_for_label, tried]}}
    )
    header = status_of(campaign, original).header
    assert header == "1 kept · 0 selected · not perturbed by polyjuice"
    empty = make_original(campaign)
    chunk_done(campaign, [empty], {str(empty.pk): {"made": 0, "skipped": [not_for_label]}})
    assert status_of(campaign, empty).why == f"not perturbed: {not_for_label['reason']}"


def test_not_generated_failed_generating_and_nothing_usable(campaign):
    fresh, failed, running, empty = (make_original(campaign) for _ in range(4))
    chunk_done(campaign, [failed], state=ChunkState.FAILED, error="ServerError: <refused>")
    chunk_done(campaign, [running], state=ChunkState.RUNNING)
    chunk_done(campaign, [empty], {str(empty.pk): {"made": 0, "skipped": []}})
    whys = {status.original.pk: status.why for status in generation_status(campaign)}
    assert whys[fresh.pk] == "not generated yet"
    assert whys[failed.pk] == "generation failed: ServerError: <refused>"
    assert whys[running.pk] == "being generated now"
    assert whys[empty.pk].startswith("nothing usable came out")


def test_some_kept_has_no_why_and_counts_selected(campaign):
    original = make_original(campaign)
    for _ in range(4):
        make_candidate(original)
    for _ in range(3):
        make_candidate(original, status=CandidateStatus.SELECTED)
    make_candidate(original, status=CandidateStatus.REJECTED)
    dropped(original, "truncated", 3)
    dropped(original, "fluency_changed", 2)
    status = status_of(campaign, original)
    assert (status.kept, status.selected, status.rejected, status.why) == (7, 3, 1, "")
    assert status.header == "7 kept · 3 cut off · 2 fluency · 3 selected · 1 rejected"


def test_whole_rewrites_are_not_usable_and_say_why(campaign):
    """Generated `global` rewrites pass the filters but are never selected (too far from
    x to be counterfactuals): an original with only those had "usable candidates" and no
    labeling unit, with no word on why."""
    only_rewrites, mixed = make_original(campaign), make_original(campaign)
    for text in ("The film was bad.", "It was a waste."):
        make_candidate(only_rewrites, text, control_code=ControlCode.GLOBAL)
    dropped(only_rewrites, "fluency_full", 1)
    make_candidate(mixed, "It was not good.", control_code=ControlCode.NEGATION)
    make_candidate(mixed, "Awful.", control_code=ControlCode.GLOBAL)
    # A researcher's own candidates are labeled whatever their edit.
    make_candidate(mixed, "Bad.", control_code=ControlCode.GLOBAL, source=CandidateSource.IMPORTED)

    status = status_of(campaign, only_rewrites)
    assert (status.kept, status.rewrites) == (0, 2)
    assert status.why == (
        "2 rewrote too much of the original to be a counterfactual, 1 failed the fluency filter"
    )
    assert status.header == "0 kept · 2 too far to label · 1 fluency · 0 selected"
    other = status_of(campaign, mixed)
    assert (other.kept, other.rewrites, other.why) == (2, 1, "")
    overview = generation_overview(campaign)
    assert overview.without_ids == [only_rewrites.pk] and overview.with_kept == 1


def test_all_rejected_says_so(campaign):
    original = make_original(campaign)
    make_candidate(original, status=CandidateStatus.REJECTED)
    make_candidate(original, status=CandidateStatus.REJECTED)
    assert status_of(campaign, original).why == "all 2 rejected in review"


def test_a_later_finished_chunk_replaces_an_earlier_failure(campaign):
    original = make_original(campaign)
    chunk_done(campaign, [original], state=ChunkState.FAILED, error="boom")
    chunk_done(campaign, [original], {str(original.pk): {"made": 0, "skipped": []}})
    assert status_of(campaign, original).state == GenerationState.GENERATED


def test_overview_counts_originals_with_and_without(campaign):
    kept, none = make_original(campaign), make_original(campaign)
    make_candidate(kept)
    dropped(none, "fluency_full", 2)
    overview = generation_overview(campaign)
    assert (overview.originals, overview.with_kept, overview.begun) == (2, 1, True)
    assert overview.without_ids == [none.pk]


def test_overview_counts_gold_rounds_originals_apart(campaign):
    """A gold round's original holds its written answers, not generated candidates: the
    page's three counts (usable, gold answers only, not generated yet) add up to all the
    originals, as the overview's "candidates for 1 of 4 originals" leaves gold out."""
    generated, gold, both, waiting = (make_original(campaign) for _ in range(4))
    make_candidate(generated)
    chunk_done(campaign, [generated, both], {})
    for original in (gold, both):
        make_candidate(original, "A gold answer.", status=CandidateStatus.GOLD)
    make_candidate(both, "A generated edit.")
    overview = generation_overview(campaign)
    assert (overview.with_kept, overview.gold_only, overview.pending) == (2, 1, 1)
    assert overview.not_generated_ids == (waiting.pk,)
    assert status_of(campaign, gold).gold == 1 and status_of(campaign, both).kept == 2
    assert candidate_counts(campaign) == {"candidates": 4, "gold_answers": 2}


def test_overview_of_a_campaign_never_generated_has_nothing_to_say(campaign):
    make_original(campaign)
    assert not generation_overview(campaign).begun


def test_a_chunk_records_skips_and_what_came_out(two_generator_campaign, tiny_lm):
    """causal-negation only rewrites positive originals: it skips the negative one."""
    run = generation_run_create(campaign=two_generator_campaign)
    chunk = run.chunks.get()
    generation_chunk_process(chunk_id=chunk.pk, lm=tiny_lm, fluency_lm=tiny_lm, worker="test")
    chunk.refresh_from_db()
    negative = two_generator_campaign.originals.get(text__startswith="This dull film")
    recorded = chunk.outcomes[str(negative.pk)]
    assert {"generator", "reason", "not_for_label"} <= set(
        next(item for item in recorded["skipped"] if item["generator"] == "causal-negation")
    )
    status = status_of(two_generator_campaign, negative)
    assert status.state == GenerationState.GENERATED
    assert status.made == recorded["made"]
    assert "causal-negation" in [item.generator for item in status.skipped]


def test_the_campaign_page_shows_what_workers_see_before_generic_rewrites(campaign):
    first = make_original(campaign, text="The acting was superb.")
    second = make_original(campaign, text="The plot was dull.")
    rewrite = make_candidate(
        first, "The movie was bad.", control_code=ControlCode.GLOBAL, fluency_full=30.0
    )
    filtered = make_candidate(
        first, "The acting was acting.", status=CandidateStatus.FILTERED, fluency_full=-20.0
    )
    kept = make_candidate(
        first, "The acting was poor.", control_code=ControlCode.LEXICAL, fluency_full=2.0
    )
    fluent = make_candidate(first, "The acting was awful.", fluency_full=4.0)
    selected = make_candidate(
        first, "The acting was not superb.", status=CandidateStatus.SELECTED, fluency_full=-3.0
    )
    later = make_candidate(second, "The plot was gripping.", status=CandidateStatus.SELECTED)

    shown = list(recent_candidates(campaign))

    # By original; selected, then kept edits by fluency, then whole rewrites, then filtered.
    assert shown == [selected, fluent, kept, rewrite, filtered, later]
    # The review page (and the API) read "by original" the same way: a researcher finds
    # what workers are shown at the top of each original, not in creation order.
    for ordering in (None, "original"):
        reviewed = candidates_filtered(campaign, CandidateFilters(ordering=ordering))
        assert list(reviewed) == shown
