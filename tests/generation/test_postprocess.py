import json

import pytest

from generation import postprocess
from generation.fluency import FluencyScore
from generation.models import LoadedModel, load_causal_lm
from generation.parsing import ParseCache
from generation.postprocess import Annotator, PostprocessStats, annotate, dedupe
from generation.records import CandidateRecord, OriginalRecord
from generation.relationship import Relationship
from generation.tokens import CONTROL_CODES, GLOBAL
from tests.generation.tiny_models import tiny_lm_directory

ORIGINALS = {
    "kids": OriginalRecord("kids", "It is great for kids.", "positive"),
    "movie": OriginalRecord("movie", "The movie was great.", "positive"),
}


@pytest.fixture(scope="module")
def parses() -> ParseCache:
    return ParseCache()


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> LoadedModel:
    return load_causal_lm(tiny_lm_directory(tmp_path_factory, "gpt2"), device="cpu")


def _candidate(key: str, text: str, code: str = "negation") -> CandidateRecord:
    return CandidateRecord(original_key=key, text=text, generator="test", control_code=code)


def _fake_scores(monkeypatch, score: FluencyScore) -> list:
    """Make every candidate score `score`; returns the FluencyItems the filter asked about."""
    asked = []

    def fake(lm, items, *, batch_size=64):
        asked.extend(items)
        return [score] * len(items)

    monkeypatch.setattr(postprocess, "fluency_scores", fake)
    return asked


def test_dedupe_ignores_case_and_spacing_and_drops_copies_of_x():
    records = [
        _candidate("kids", "It is not great for kids."),
        _candidate("kids", "it is  NOT great   for kids."),
        _candidate("kids", "It is great for kids."),
        _candidate("kids", "IT IS GREAT FOR KIDS."),
        _candidate("movie", "It is not great for kids."),  # same text, another original
        _candidate("movie", " the movie was GREAT. "),
    ]
    stats = PostprocessStats()

    unique = dedupe(records, ORIGINALS, stats)

    assert unique == [records[0], records[4]]
    assert stats.duplicates == 2
    assert stats.copies == 2


def test_annotate_counts_what_it_received_removed_and_kept(parses):
    records = [
        _candidate("kids", "It is not great for kids."),
        _candidate("kids", "It is not great for kids.", code="lexical"),
        _candidate("kids", "It is great for kids."),
        _candidate("movie", "The movie was terrible.", code="lexical"),
    ]

    result = annotate(records, ORIGINALS, parses=parses)

    assert result.stats == PostprocessStats(
        received=4, duplicates=1, copies=1, fluency_dropped=0, kept=2
    )
    assert [c.record for c in result.candidates] == [records[0], records[3]]


def test_every_candidate_has_a_code_a_json_edit_and_a_relationship_to_its_base(parses):
    records = [
        _candidate("kids", "It is not great for kids."),
        _candidate("kids", "It is great for adults.", code="lexical"),
        _candidate("movie", "The movie was terrible.", code="lexical"),
        _candidate("movie", "Two movies were great.", code="quantifier"),
    ]

    result = annotate(records, ORIGINALS, parses=parses)

    assert len(result.candidates) == len(records)
    for candidate in result.candidates:
        assert candidate.code in (*CONTROL_CODES, GLOBAL)
        assert json.loads(json.dumps(candidate.edit)) == candidate.edit
        assert candidate.edit["ops"], "a real change has at least one edit op"
        assert isinstance(candidate.relationship, Relationship)
        assert candidate.relationship.base == candidate.record.original_key
        assert candidate.relationship.code == candidate.code
    codes = {c.record.text: c.code for c in result.candidates}
    assert codes["It is not great for kids."] == "negation"
    assert codes["Two movies were great."] == "quantifier"


def test_without_a_fluency_model_nothing_is_scored_or_dropped(parses, monkeypatch):
    monkeypatch.setattr(postprocess, "fluency_scores", _never_called)
    records = [
        _candidate("kids", "It is not great for kids."),
        _candidate("movie", "The movie was terrible."),
    ]

    # Even a threshold that every score would fail drops nothing without a model.
    result = annotate(records, ORIGINALS, parses=parses, threshold=-1000.0)

    assert all(c.fluency is None and c.kept and c.dropped_by is None for c in result.candidates)
    assert result.stats.fluency_dropped == 0
    assert result.stats.kept == 2


@pytest.mark.parametrize(
    ("full", "changed", "dropped_by"),
    [
        (-10.0, None, None),
        (-10.0, -10.0, None),
        (-10.000001, None, "fluency_full"),
        (0.0, -10.000001, "fluency_changed"),
        (5.0, -10.0, None),
        (-12.0, -12.0, "fluency_full"),  # the sentence is checked first
    ],
)
def test_fluency_threshold_boundary(parses, tiny_lm, monkeypatch, full, changed, dropped_by):
    """A delta of exactly -threshold passes; anything lower drops the candidate."""
    _fake_scores(monkeypatch, FluencyScore(full=full, changed=changed))
    records = [_candidate("kids", "It is not great for kids.")]

    result = annotate(records, ORIGINALS, parses=parses, fluency_lm=tiny_lm, threshold=10.0)

    (candidate,) = result.candidates
    assert candidate.fluency == FluencyScore(full=full, changed=changed)
    assert candidate.dropped_by == dropped_by
    assert candidate.kept is (dropped_by is None)
    assert result.stats.fluency_dropped == int(dropped_by is not None)
    assert result.stats.kept == int(dropped_by is None)


def test_dropped_candidates_stay_in_the_result_with_their_reason(parses, tiny_lm, monkeypatch):
    _fake_scores(monkeypatch, FluencyScore(full=-30.0, changed=-1.0))
    records = [
        _candidate("kids", "It is not great for kids."),
        _candidate("movie", "The movie was terrible."),
    ]

    result = annotate(records, ORIGINALS, parses=parses, fluency_lm=tiny_lm, threshold=10.0)

    assert [c.dropped_by for c in result.candidates] == ["fluency_full", "fluency_full"]
    assert result.stats.fluency_dropped == 2
    assert result.stats.kept == 0


def test_fluency_is_asked_about_x_x_hat_and_the_changed_phrases(parses, tiny_lm, monkeypatch):
    asked = _fake_scores(monkeypatch, FluencyScore(full=0.0, changed=0.0))
    records = [
        _candidate("kids", "It is not great for kids."),
        _candidate("kids", "It is not great for kids."),  # duplicates are not scored
        _candidate("movie", "The movie was terrible."),
    ]

    annotate(records, ORIGINALS, parses=parses, fluency_lm=tiny_lm)

    assert [(item.original, item.candidate) for item in asked] == [
        ("It is great for kids.", "It is not great for kids."),
        ("The movie was great.", "The movie was terrible."),
    ]
    negation, lexical = asked
    assert any("not" in negation.candidate[start:end] for _, (start, end) in negation.phrases)
    assert [
        (lexical.original[old[0] : old[1]], lexical.candidate[new[0] : new[1]])
        for old, new in lexical.phrases
    ] == [("great", "terrible")]


def test_real_scores_from_a_tiny_model_are_attached(parses, tiny_lm):
    records = [
        _candidate("kids", "It is not great for kids."),
        _candidate("movie", "The movie was terrible."),
    ]

    lenient = annotate(records, ORIGINALS, parses=parses, fluency_lm=tiny_lm, threshold=1e6)
    strict = annotate(records, ORIGINALS, parses=parses, fluency_lm=tiny_lm, threshold=-1e6)

    assert all(isinstance(c.fluency, FluencyScore) for c in lenient.candidates)
    assert all(c.kept for c in lenient.candidates)
    assert [c.fluency for c in strict.candidates] == [c.fluency for c in lenient.candidates]
    assert [c.dropped_by for c in strict.candidates] == ["fluency_full", "fluency_full"]


def test_a_candidate_longer_than_the_fluency_model_reads_is_dropped_unscored(parses, tiny_lm):
    """The tiny model reads 127 tokens after its start token: an x̂ past that is dropped
    by name, and the others of the run are still scored (it once stopped the whole run)."""
    endless = "It is not great for kids" + " and more" * 80 + "."
    records = [_candidate("kids", endless), _candidate("movie", "The movie was terrible.")]

    result = annotate(
        records, ORIGINALS, parses=parses, fluency_lm=tiny_lm, threshold=1e6, sanity=False
    )

    long, short = result.candidates
    assert (long.dropped_by, long.fluency) == ("too_long", None)
    assert short.kept and isinstance(short.fluency, FluencyScore)
    assert result.stats.dropped == {"too_long": 1} and result.stats.kept == 1
    # With the sanity filters on, the run-on filter names it first.
    filtered = annotate(records, ORIGINALS, parses=parses, fluency_lm=tiny_lm, threshold=1e6)
    assert filtered.candidates[0].dropped_by == "run_on"


def test_candidates_of_an_original_longer_than_the_fluency_model_reads_are_dropped(parses, tiny_lm):
    """x̂ is scored against x: where x does not fit, even a short x̂ is dropped by name,
    and the other originals' candidates are scored as usual."""
    long = OriginalRecord("long", "The film was good" + " and long" * 80 + ".", "positive")
    records = [_candidate("long", "The film was bad."), _candidate("kids", "It is not great.")]

    result = annotate(
        records, {**ORIGINALS, "long": long}, parses=parses, fluency_lm=tiny_lm, threshold=1e6,
        sanity=False,
    )  # fmt: skip

    assert [c.dropped_by for c in result.candidates] == ["too_long", None]


def test_progress_reports_each_finished_stage(parses, tiny_lm, monkeypatch):
    _fake_scores(monkeypatch, FluencyScore(full=0.0, changed=None))
    records = [_candidate("kids", "It is not great for kids.")]
    without_model, with_model = [], []

    annotate(records, ORIGINALS, parses=parses, progress=without_model.append)
    annotate(records, ORIGINALS, parses=parses, fluency_lm=tiny_lm, progress=with_model.append)

    assert without_model == ["parsed"]
    assert with_model == ["parsed", "scored"]


def test_nothing_to_annotate_scores_nothing(parses, tiny_lm, monkeypatch):
    monkeypatch.setattr(postprocess, "fluency_scores", _never_called)
    copies_only = [_candidate("kids", "It is great for kids.")]

    result = annotate(copies_only, ORIGINALS, parses=parses, fluency_lm=tiny_lm)

    assert result.candidates == []
    assert result.stats == PostprocessStats(received=1, copies=1)


def test_the_annotator_scores_fluency_in_the_final_order_of_the_records(
    parses, tiny_lm, monkeypatch
):
    asked = _fake_scores(monkeypatch, FluencyScore(full=0.0, changed=None))
    records = [
        _candidate("kids", "It is not great for kids."),
        _candidate("movie", "The movie was terrible."),
        _candidate("kids", "It is great for adults."),
        _candidate("movie", "The movie was not great."),
    ]
    annotator = Annotator(ORIGINALS, parses=parses, fluency_lm=tiny_lm, workers=0)

    # Prompts finish out of order; the result follows `records`, as `annotate` gives it.
    annotator.add(records[2:])
    annotator.add(records[:2])
    result = annotator.finish(records)

    assert [item.candidate for item in asked] == [r.text for r in records]
    expected = annotate(records, ORIGINALS, parses=parses, fluency_lm=tiny_lm)
    assert result == expected


def test_finish_defaults_to_everything_added_in_the_order_added(parses):
    first = [_candidate("kids", "It is not great for kids.")]
    second = [_candidate("movie", "The movie was terrible."), *first]
    annotator = Annotator(ORIGINALS, parses=parses, workers=0)

    annotator.add(first)
    annotator.add(second)
    result = annotator.finish()

    assert [c.record for c in result.candidates] == [first[0], second[0]]
    assert result.stats == PostprocessStats(received=3, duplicates=1, kept=2)


def _never_called(*args, **kwargs):
    raise AssertionError("fluency was scored")
