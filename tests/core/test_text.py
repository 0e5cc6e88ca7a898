"""Sentences shown to people end once."""

import pytest

from cfannotate.core.text import sentence


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
