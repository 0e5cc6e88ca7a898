import itertools
import random

import pytest

from generation.blanks import (
    DEPENDENCY_GROUPS,
    BlankSet,
    BlankSpan,
    blanked_text,
    random_blank_set,
    random_blank_sets,
    sentence_blank,
    targeted_blank_sets,
)
from generation.parsing import load_nlp
from generation.tokens import BLANK


@pytest.fixture(scope="module")
def nlp():
    return load_nlp()


def blank(doc, *spans, strategy="test"):
    return blanked_text(doc, BlankSet(tuple(BlankSpan(s, e) for s, e in spans), strategy))


def test_token_subtree_and_insertion_blanks(nlp):
    doc = nlp("It is great for kids.")
    assert blank(doc, (2, 3)) == "It is [BLANK] for kids."
    assert blank(doc, (3, 5)) == "It is great [BLANK]."
    assert blank(doc, (2, 2)) == "It is [BLANK] great for kids."
    assert blank(doc, (0, 0)) == "[BLANK] It is great for kids."
    assert blank(doc, (2, 3), (4, 5)) == "It is [BLANK] for [BLANK]."
    assert blanked_text(doc, sentence_blank(doc)) == BLANK


def test_blanks_keep_punctuation_contractions_and_non_ascii(nlp):
    doc = nlp("I didn't like the café, sadly!")
    texts = [token.text for token in doc]
    assert texts[:3] == ["I", "did", "n't"]
    assert blank(doc, (1, 2)) == "I [BLANK]n't like the café, sadly!"
    cafe = texts.index("café")
    assert blank(doc, (cafe, cafe + 1)) == "I didn't like the [BLANK], sadly!"


def test_random_blank_sets_are_distinct_reproducible_and_never_on_punctuation(nlp):
    doc = nlp("The old man quickly walked his two dogs to the park, and they played.")
    first = random_blank_sets(doc, random.Random(7), count=4)
    second = random_blank_sets(doc, random.Random(7), count=4)
    assert first == second
    assert first[0].is_sentence
    assert len({blank_set.spans for blank_set in first}) == len(first) == 5
    for blank_set in first[1:]:
        assert 1 <= len(blank_set.spans) <= 3
        for span in blank_set.spans:
            covered = doc[span.start : span.end]
            assert span.is_insertion or not all(token.is_punct for token in covered)
        # spans never overlap or touch
        ordered = sorted(blank_set.spans)
        assert all(a.end < b.start for a, b in itertools.pairwise(ordered))


@pytest.mark.parametrize("group", sorted(DEPENDENCY_GROUPS))
def test_group_blanks_start_from_tokens_of_that_group(nlp, group):
    doc = nlp("The tired teacher has graded the long essays and the short quizzes.")
    rng = random.Random(3)
    for _ in range(20):
        blank_set = random_blank_set(doc, rng, group=group, max_spans=1)
        if blank_set is None:
            continue
        span = blank_set.spans[0]
        inside = doc[span.start : max(span.end, span.start + 1)]
        assert any(token.dep_ in DEPENDENCY_GROUPS[group] for token in inside), blank_set


def test_insertions_never_split_a_contraction(nlp):
    doc = nlp("I didn't go.")
    rng = random.Random(0)
    for _ in range(200):
        blank_set = random_blank_set(doc, rng, max_spans=1)
        assert blank_set is not None
        span = blank_set.spans[0]
        if span.is_insertion:
            assert doc[span.start].text != "n't"


def test_targeted_blanks_use_exactly_the_given_spans(nlp):
    doc = nlp("His surfboard is beneath him.")
    sets = targeted_blank_sets(doc, [(3, 4)])
    assert [blanked_text(doc, s) for s in sets] == ["His surfboard is [BLANK] him."]
    several = targeted_blank_sets(doc, [(0, 2), (3, 4), (99, 100)])
    assert [blanked_text(doc, s) for s in several] == [
        "[BLANK] is beneath him.",
        "His surfboard is [BLANK] him.",
        "[BLANK] is [BLANK] him.",
    ]
    assert targeted_blank_sets(doc, [(5, 2)]) == []


def test_empty_and_punctuation_only_sentences(nlp):
    assert random_blank_sets(nlp(""), random.Random(0)) == []
    only_punct = nlp("?!")
    assert [s.strategy for s in random_blank_sets(only_punct, random.Random(0))] == ["sentence"]
