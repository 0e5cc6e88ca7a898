import pytest

from generation import pipeline, postprocess
from generation.decoding import DecodingConfig
from generation.fluency import FluencyScore
from generation.models import LoadedModel, load_causal_lm
from generation.parsing import ParseCache
from generation.pipeline import PipelineSettings, perturb_texts, run_polyjuice
from generation.polyjuice import PerturbTarget, PolyjuiceSettings
from generation.records import OriginalRecord
from generation.sanity import REASONS
from tests.generation.scripted_models import scripted_lm_directory
from tests.generation.tiny_models import tiny_lm_directory

KIDS = OriginalRecord("kids", "It is great for kids.", "positive")
MOVIE = OriginalRecord("movie", "The movie was great.", "positive")
ANNOTATE_PARTS = {"annotate:pool_wait", "annotate:here", "annotate:fluency"}
SECONDS_KEYS = {"load", "generate", "annotate", "total"} | ANNOTATE_PARTS


@pytest.fixture(scope="module")
def scripted_lm(tmp_path_factory) -> LoadedModel:
    """Answers every prompt with `not [ANSWER]` (see scripted_models)."""
    return load_causal_lm(scripted_lm_directory(tmp_path_factory), device="cpu")


@pytest.fixture(scope="module")
def fluency_lm(tmp_path_factory) -> LoadedModel:
    return load_causal_lm(tiny_lm_directory(tmp_path_factory, "gpt2"), device="cpu")


@pytest.fixture(autouse=True)
def no_model_loading(monkeypatch):
    """Every test hands its models in; loading one (the default above all) is a failure."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"the pipeline tried to load a model: {args}")

    monkeypatch.setattr(pipeline, "load_cached", refuse)


def _settings(threshold: float | None = 10.0, **polyjuice) -> PipelineSettings:
    polyjuice.setdefault("codes", ("negation", "lexical"))
    polyjuice.setdefault("random_blank_sets", 2)
    polyjuice.setdefault("decoding", DecodingConfig(per_prompt=2))
    return PipelineSettings(fluency_threshold=threshold, polyjuice=PolyjuiceSettings(**polyjuice))


def test_run_polyjuice_generates_annotates_and_filters(scripted_lm, fluency_lm):
    targets = [PerturbTarget(KIDS), PerturbTarget(MOVIE)]

    result = run_polyjuice(targets, _settings(), lm=scripted_lm, fluency_lm=fluency_lm)

    assert result.originals == [KIDS, MOVIE]
    assert result.prompts > 0
    stats = result.stats
    assert stats.received + result.malformed == result.prompts * 2
    dropped = sum(stats.dropped.values())
    assert stats.received == stats.duplicates + stats.copies + dropped + stats.kept
    assert len(result.candidates) == dropped + stats.kept > 0
    assert {c.record.original_key for c in result.candidates} == {"kids", "movie"}
    for candidate in result.candidates:
        assert candidate.record.generator == "polyjuice"
        if candidate.dropped_by in REASONS:  # broken ("not"): dropped before fluency
            assert candidate.fluency is None
            continue
        assert isinstance(candidate.fluency, FluencyScore)
        assert candidate.kept is candidate.fluency.passes(10.0)
    assert set(result.seconds) == SECONDS_KEYS
    assert all(value >= 0 for value in result.seconds.values())
    assert result.seconds["total"] >= result.seconds["generate"] + result.seconds["annotate"]
    # The annotation's parts add up to no more than its whole.
    assert sum(result.seconds[part] for part in ANNOTATE_PARTS) <= result.seconds["annotate"]


def test_kept_is_the_kept_subset_of_the_candidates(scripted_lm, fluency_lm, monkeypatch):
    # Alternate the scores so both kept and dropped candidates show up.
    def alternate(lm, items, *, batch_size=64):
        return [FluencyScore(full=-20.0 * (i % 2), changed=None) for i in range(len(items))]

    monkeypatch.setattr(postprocess, "fluency_scores", alternate)

    result = run_polyjuice(
        [PerturbTarget(KIDS), PerturbTarget(MOVIE)],
        _settings(),
        lm=scripted_lm,
        fluency_lm=fluency_lm,
    )

    kept = result.kept
    assert kept == [c for c in result.candidates if c.dropped_by is None]
    assert 0 < len(kept) < len(result.candidates)
    assert all(any(k is c for c in result.candidates) for k in kept)
    assert len(kept) == result.stats.kept
    assert {c.dropped_by for c in result.candidates} - set(REASONS) == {None, "fluency_full"}


def test_no_threshold_skips_fluency_scoring(scripted_lm, fluency_lm, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("fluency was scored")

    monkeypatch.setattr(postprocess, "fluency_scores", refuse)

    result = run_polyjuice(
        [PerturbTarget(KIDS)], _settings(threshold=None), lm=scripted_lm, fluency_lm=fluency_lm
    )

    assert result.candidates
    assert all(c.fluency is None for c in result.candidates)
    assert all(c.kept or c.dropped_by in REASONS for c in result.candidates)
    assert result.stats.fluency_dropped == 0


def test_no_threshold_needs_no_fluency_model(scripted_lm):
    # The autouse fixture fails the test if a fluency model is loaded.
    result = run_polyjuice([PerturbTarget(KIDS)], _settings(threshold=None), lm=scripted_lm)

    assert result.candidates
    assert all(c.fluency is None for c in result.candidates)


def test_perturb_texts_keys_plain_sentences_and_passes_blanks_through(scripted_lm):
    blanked = ("It is [BLANK] for kids.",)

    result = perturb_texts(
        ["It is great for kids."], _settings(threshold=None), blanked=blanked, lm=scripted_lm
    )

    assert result.originals == [OriginalRecord(key="x1", text="It is great for kids.", label="")]
    assert result.prompts == 2  # one blanked text, two codes
    assert {c.record.prompt for c in result.candidates} == set(blanked)
    # Two codes, two samples each, one answer: one candidate and three duplicates.
    assert [c.record.text for c in result.candidates] == ["It is not for kids."]
    assert (result.stats.received, result.stats.duplicates) == (4, 3)
    assert set(result.seconds) == SECONDS_KEYS


def test_perturb_texts_numbers_originals_from_one(scripted_lm):
    texts = ["It is great for kids.", "The movie was great.", "A man is playing a guitar."]

    result = perturb_texts(texts, _settings(threshold=None, random_blank_sets=1), lm=scripted_lm)

    assert [(o.key, o.text) for o in result.originals] == [
        ("x1", texts[0]),
        ("x2", texts[1]),
        ("x3", texts[2]),
    ]
    assert {c.record.original_key for c in result.candidates} <= {"x1", "x2", "x3"}


def test_no_targets_give_an_empty_result(scripted_lm, fluency_lm):
    result = run_polyjuice([], _settings(), lm=scripted_lm, fluency_lm=fluency_lm)

    assert (result.originals, result.candidates, result.prompts, result.malformed) == ([], [], 0, 0)
    assert result.stats.received == 0
    assert set(result.seconds) == SECONDS_KEYS


def test_run_polyjuice_fills_the_parse_cache_it_is_given(scripted_lm):
    parses = ParseCache()

    run_polyjuice([PerturbTarget(KIDS)], _settings(threshold=None), lm=scripted_lm, parses=parses)

    assert len(parses) > 0  # x and its candidates were parsed into it


class _Counting:
    """A generator that only reports each original done."""

    name = "counting"

    def generate(self, originals, *, context):
        from generation.generators import GeneratorOutput

        for _ in originals:
            context.advance(1)
        return GeneratorOutput()


def test_run_generator_reports_each_original_to_on_progress():
    """The web app's live progress: the generator's own counts, as it goes."""
    reports: list[int] = []
    pipeline.run_generator(
        _Counting(),
        [KIDS, MOVIE],
        PipelineSettings(fluency_threshold=None),
        on_progress=reports.append,
    )
    assert reports == [1, 1]


def test_run_generator_s_bar_counts_originals(capsys):
    """The command line's bar: a generator reports originals done, and the bar says so."""
    pipeline.run_generator(
        _Counting(), [KIDS, MOVIE], PipelineSettings(fluency_threshold=None), show_progress=True
    )
    drawn = capsys.readouterr().err
    assert "counting" in drawn and "/2 [" in drawn
    assert "original/s" in drawn or "s/original" in drawn
    assert "prompt" not in drawn


def test_the_annotation_pool_hears_of_the_decoding_before_it_starts(
    scripted_lm, fluency_lm, monkeypatch
):
    """So its workers load while decoding runs (continuous batching hands most candidates
    over at the end)."""
    from generation.engines import make_engine
    from generation.postprocess import Annotator

    expected, decoded = [], []
    monkeypatch.setattr(Annotator, "expect", lambda self, sequences: expected.append(sequences))
    engine = make_engine("loop", lm=scripted_lm)
    generate = engine.generate

    def watched(*args, **kwargs):
        decoded.append(len(expected))
        return generate(*args, **kwargs)

    engine.generate = watched
    result = run_polyjuice([PerturbTarget(KIDS)], _settings(), engine=engine, fluency_lm=fluency_lm)

    assert expected == [result.prompts * 2]
    assert decoded and decoded[0] == 1
