"""Sentences shown to people end once."""

import pytest

from cfannotate.core.text import counted, sentence


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Created Reviews", "Created Reviews."),
        ("Created Pilot v2.", "Created Pilot v2."),
        ("Imported 3 originals from data...", "Imported 3 originals from data."),
        ("Is it right?", "Is it right?"),
        ("  two\n lines  ", "two lines."),
        ("3.5", "3.5."),
    ],
)
def test_a_sentence_ends_with_exactly_one_period(text, said):
    assert sentence(text) == said
    assert ".." not in sentence(text)


@pytest.mark.parametrize(
    ("count", "noun", "plural", "said"),
    [
        (1, "worker", None, "1 worker"),
        (0, "round", None, "0 rounds"),
        (3, "assignment", None, "3 assignments"),
        (2, "person", "people", "2 people"),
        (1, "person", "people", "1 person"),
    ],
)
def test_a_count_takes_its_noun_in_the_right_number(count, noun, plural, said):
    assert counted(count, noun, plural) == said
