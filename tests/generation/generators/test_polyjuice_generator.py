"""The Polyjuice generator's progress: originals reported as their prompts finish, not all
at the end of decoding (a campaign page's live progress moves within a chunk); which
originals it takes."""

import pytest

from generation.generators import GenerationContext, load_generator
from generation.models import load_causal_lm
from generation.records import OriginalRecord
from tests.generation.tiny_models import tiny_lm_directory

ORIGINALS = [
    OriginalRecord("1", "It is great for kids.", "positive"),
    OriginalRecord("2", "The movie was great.", "positive"),
    OriginalRecord("3", "The soundtrack is gorgeous.", "positive"),
]


@pytest.fixture
def answered(monkeypatch):
    """Decoding answers every prompt at once, prompt by prompt as the loop engine reports."""

    def fake(lm, prompts, budgets, config, **kwargs):
        return [["not [ANSWER]"] * config.per_prompt for _ in prompts]

    monkeypatch.setattr("generation.engines.loop.generate_continuations", fake)


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    return load_causal_lm(tiny_lm_directory(tmp_path_factory, "gpt2"), device="cpu")


def _generate(originals, tiny_lm, **options):
    options = {"codes": ["negation"], "blank_sets": 0, "per_prompt": 1, "engine": "loop"} | options
    generator = load_generator("polyjuice", options)
    reports: list[int] = []
    context = GenerationContext(device="cpu", lm=tiny_lm, progress=reports.append)
    output = generator.generate(originals, context=context)
    return output, reports


def test_each_original_is_reported_as_its_prompts_finish(answered, tiny_lm):
    output, reports = _generate(ORIGINALS, tiny_lm)
    assert output.candidates
    assert reports == [1, 1, 1]


def test_originals_with_more_prompts_than_expected_are_caught_up_at_the_end(answered, tiny_lm):
    # Two codes and a blank set besides the sentence: up to four prompts an original.
    _, reports = _generate(ORIGINALS, tiny_lm, codes=["negation", "lexical"], blank_sets=1)
    assert sum(reports) == len(ORIGINALS) and all(count > 0 for count in reports)


def test_skipped_originals_count_as_done(answered, tiny_lm):
    originals = [*ORIGINALS[:1], OriginalRecord("empty", "   ", "positive")]
    output, reports = _generate(originals, tiny_lm)
    assert [skip.original_key for skip in output.skipped] == ["empty"]
    assert sum(reports) == 2 and 0 not in reports


def test_a_text_without_a_verb_is_perturbed(answered, tiny_lm):
    """SNLI hypotheses and review openers are often verbless; infilling needs no verb."""
    originals = [
        OriginalRecord("snli", "A tall person on a bike", "neutral"),
        OriginalRecord("review", "What an awful show.", "negative"),
    ]
    output, _ = _generate(originals, tiny_lm)
    assert output.skipped == []
    assert {candidate.original_key for candidate in output.candidates} == {"snli", "review"}
