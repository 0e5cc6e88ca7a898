import pytest

from generation.generators import (
    GeneratorOptionsError,
    UnknownGenerator,
    generator_class,
    generator_names,
    load_generator,
)
from generation.generators.base import input_problem


def test_every_registered_generator_loads_with_its_defaults():
    for name in generator_names():
        generator = load_generator(name)
        assert generator.name == name and generator_class(name).name == name


def test_options_are_checked_before_anything_runs():
    generator = load_generator("polyjuice", {"codes": ["negation"], "per_prompt": 2, "top_p": 1})
    assert generator.settings.codes == ("negation",) and generator.settings.top_p == 1.0
    with pytest.raises(GeneratorOptionsError, match=r"unknown option.*colour"):
        load_generator("polyjuice", {"colour": "blue"})
    with pytest.raises(GeneratorOptionsError, match="per_prompt must be a whole number"):
        load_generator("polyjuice", {"per_prompt": "three"})
    with pytest.raises(GeneratorOptionsError, match="codes must be a list"):
        load_generator("polyjuice", {"codes": "negation"})
    with pytest.raises(GeneratorOptionsError, match="Unknown control code"):
        load_generator("polyjuice", {"codes": ["sarcasm"]})
    with pytest.raises(UnknownGenerator, match="choose one of"):
        load_generator("gpt-magic")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty text"),
        ("   ", "empty text"),
        ("12345 !!!", "no words"),
        ("Это очень хороший фильм", "non-Latin"),
        ("Der Hund bellt sehr laut heute", "function words"),
        ("Ce film est vraiment très mauvais", "function words"),
        ("Questo film è davvero brutto.", "function words"),
        ("Lorem ipsum dolor sit amet consectetur.", "function words"),
    ],
)
def test_input_problems_have_reasons(text, reason):
    assert reason in input_problem(text)


@pytest.mark.parametrize(
    "text",
    [
        "The movie was great.",
        # Terse English without one function word: the word list knows its words.
        "Great acting, terrible plot, awful music.",
        "Poor sleep quality predicted higher blood pressure.",
        "Don't watch Edel & Starck.",  # a contracted function word
    ],
)
def test_an_ordinary_sentence_has_no_problem(text):
    assert input_problem(text) is None


def test_without_a_word_list_the_function_words_decide(monkeypatch):
    from generation import sanity

    monkeypatch.setattr(sanity, "word_list", lambda: frozenset())
    assert "function words" in input_problem("Great acting, terrible plot, awful music.")


def test_option_problems_name_every_option_at_fault():
    with pytest.raises(GeneratorOptionsError) as caught:
        load_generator("lexicon-remove", {"colour": "red", "min_valence": 9, "max_tokens": "x"})
    assert set(caught.value.problems) == {"colour", "min_valence", "max_tokens"}
    assert caught.value.problems["min_valence"] == "min_valence must be in (0, 4], not 9.0"


def test_a_problem_of_options_together_blames_the_one_that_breaks_them():
    # Beam search with 2 beams cannot return the default 3 sequences per prompt.
    with pytest.raises(GeneratorOptionsError) as caught:
        load_generator("polyjuice", {"num_beams": 2})
    assert list(caught.value.problems) == ["num_beams"]
    with pytest.raises(GeneratorOptionsError) as caught:
        load_generator("polyjuice", {"num_beams": 2, "per_prompt": 2, "temperature": 0})
    assert list(caught.value.problems) == ["temperature"]
    with pytest.raises(GeneratorOptionsError) as caught:
        load_generator("lexicon-remove", {"positive_labels": ["a"], "negative_labels": ["a"]})
    assert set(caught.value.problems) == {"positive_labels", "negative_labels"}


def test_polyjuice_slices_perturb_only_what_matches(tmp_path_factory, monkeypatch):
    """§4.1 targeting as generator options: matching originals blanked on the match."""
    from generation.generators import GenerationContext
    from generation.models import load_causal_lm
    from generation.records import OriginalRecord
    from tests.generation.tiny_models import tiny_lm_directory

    seen = []

    def fake(lm, prompts, budgets, config, **kwargs):
        seen.extend(prompts)
        return [["lying on [ANSWER]"]] * len(prompts)

    monkeypatch.setattr("generation.engines.loop.generate_continuations", fake)
    lm = load_causal_lm(tiny_lm_directory(tmp_path_factory, "gpt2"), device="cpu")
    generator = load_generator(
        "polyjuice", {"slices": ["preposition"], "slice_code": "resemantic", "per_prompt": 1}
    )
    originals = [
        OriginalRecord("1", "His surfboard is beneath him.", ""),
        OriginalRecord("2", "It rained.", ""),
    ]
    output = generator.generate(originals, context=GenerationContext(device="cpu", lm=lm))
    assert [p.own for p in seen] == [" [resemantic] His surfboard is [BLANK] him. [SEP]"]
    assert [c.text for c in output.candidates] == ["His surfboard is lying on him."]
    assert [(s.original_key, s.reason) for s in output.skipped] == [
        ("2", "matches none of the slices preposition")
    ]
    with pytest.raises(GeneratorOptionsError, match="Unknown slicing function"):
        load_generator("polyjuice", {"slices": ["sarcasm"]})
    with pytest.raises(GeneratorOptionsError, match="Unknown control code 'sarcasm'"):
        load_generator("polyjuice", {"slices": ["negation"], "slice_code": "sarcasm"})
