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
    ],
)
def test_input_problems_have_reasons(text, reason):
    assert reason in input_problem(text)


def test_an_ordinary_sentence_has_no_problem():
    assert input_problem("The movie was great.") is None
