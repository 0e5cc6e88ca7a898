import json
import random

import pytest

from bench.annotation import quadratic_levenshtein  # the old table: what it must still give
from generation.edits import Edit, char_span, compute_edit, levenshtein, token_alignment
from generation.parsing import load_nlp

TABLE_1_X = "A dog is embraced by the woman."


@pytest.fixture(scope="module")
def nlp():
    return load_nlp()


def edit_of(nlp, x: str, x_hat: str):
    x_doc, x_hat_doc = nlp(x), nlp(x_hat)
    return x_doc, x_hat_doc, compute_edit(x_doc, x_hat_doc)


def phrases(x_doc, x_hat_doc, op) -> tuple[str, str]:
    return x_doc.text[slice(*op.source_chars)], x_hat_doc.text[slice(*op.target_chars)]


def test_identical_texts_have_no_ops(nlp):
    _, _, edit = edit_of(nlp, TABLE_1_X, TABLE_1_X)
    assert edit.ops == ()
    assert edit.is_identity
    assert (edit.token_distance, edit.edit_ratio) == (0, 0.0)


def test_case_only_change_is_identity(nlp):
    _, _, edit = edit_of(nlp, "Great movie.", "great MOVIE.")
    assert edit.is_identity


def test_insert_widens_to_the_modified_noun_phrase(nlp):
    x, x_hat, edit = edit_of(nlp, TABLE_1_X, "A dog is embraced by the little woman.")
    (op,) = edit.ops
    assert (op.kind, op.source, op.target) == ("insert", (6, 6), (6, 7))
    assert (op.removed, op.added) == ("", "little")
    assert phrases(x, x_hat, op) == ("the woman", "the little woman")
    assert edit.added_tokens == ("little",)
    assert edit.removed_tokens == ()


def test_delete_mirrors_insert(nlp):
    x, x_hat, edit = edit_of(nlp, "A dog is embraced by the little woman.", TABLE_1_X)
    (op,) = edit.ops
    assert (op.kind, op.removed, op.added) == ("delete", "little", "")
    assert phrases(x, x_hat, op) == ("the little woman", "the woman")


def test_negation_under_a_clause_head_attaches_to_the_next_word(nlp):
    x, x_hat, edit = edit_of(nlp, "It is great for kids.", "It is not great for children.")
    negation, lexical = edit.ops
    assert (negation.kind, negation.added) == ("insert", "not")
    assert phrases(x, x_hat, negation) == ("great for kids", "not great for children")
    assert (lexical.kind, lexical.removed, lexical.added) == ("replace", "kids", "children")
    assert phrases(x, x_hat, lexical) == ("kids", "children")
    assert edit.removed_tokens == ("kids",)
    assert edit.added_tokens == ("not", "children")


def test_replace_keeps_the_phrase_under_the_root(nlp):
    x, x_hat, edit = edit_of(nlp, TABLE_1_X, "A dog is wrapped in a blanket.")
    (op,) = edit.ops
    assert op.kind == "replace"
    assert phrases(x, x_hat, op) == ("embraced by the woman", "wrapped in a blanket")


def test_single_root_word_is_not_widened_to_the_sentence(nlp):
    x, x_hat, edit = edit_of(nlp, TABLE_1_X, "A dog is attacked by the woman.")
    (op,) = edit.ops
    assert op.source_subtree == op.source == (3, 4)
    assert phrases(x, x_hat, op) == ("embraced", "attacked")


def test_subject_noun_widens_to_its_determiner(nlp):
    x, x_hat, edit = edit_of(nlp, TABLE_1_X, "A woman is embraced by the dog.")
    first, second = edit.ops
    assert phrases(x, x_hat, first) == ("A dog", "A woman")
    assert phrases(x, x_hat, second) == ("the woman", "the dog")


def test_contraction_is_split_into_its_own_token(nlp):
    x, x_hat, edit = edit_of(nlp, "It isn't great.", "It is great.")
    (op,) = edit.ops
    assert (op.kind, op.removed) == ("delete", "n't")
    assert edit.removed_tokens == ("n't",)
    assert phrases(x, x_hat, op) == ("n't great", "great")


def test_punctuation_is_an_op_but_not_a_removed_token(nlp):
    _, _, edit = edit_of(nlp, "Great movie.", "Great movie!")
    (op,) = edit.ops
    assert (op.kind, op.removed, op.added) == ("replace", ".", "!")
    assert edit.removed_tokens == edit.added_tokens == ()


def test_non_ascii_character_spans(nlp):
    x, x_hat, edit = edit_of(nlp, "The café was lovely. 😀", "The café was not lovely. 😀")
    (op,) = edit.ops
    assert phrases(x, x_hat, op) == ("lovely", "not lovely")
    assert x_hat.text[slice(*op.target_chars)] == x_hat[slice(*op.target_subtree)].text


def test_empty_original(nlp):
    x, x_hat, edit = edit_of(nlp, "", "Hello world.")
    (op,) = edit.ops
    assert (op.kind, op.source, op.source_subtree, op.source_chars) == (
        "insert",
        (0, 0),
        (0, 0),
        (0, 0),
    )
    assert phrases(x, x_hat, op) == ("", "Hello world.")
    assert edit.edit_ratio == 1.0


def test_both_empty(nlp):
    _, _, edit = edit_of(nlp, "", "")
    assert edit.is_identity
    assert edit.edit_ratio == 0.0


def test_widening_stays_in_the_changed_sentence(nlp):
    x, x_hat, edit = edit_of(
        nlp, "The plot is thin. The cast is wonderful.", "The plot is thin. The cast is awful."
    )
    (op,) = edit.ops
    assert phrases(x, x_hat, op) == ("wonderful", "awful")
    assert op.source_subtree[0] >= 5  # never reaches back into the first sentence


def test_distance_and_ratio(nlp):
    _, _, edit = edit_of(nlp, TABLE_1_X, "A woman is embraced by the dog.")
    assert edit.token_distance == 2
    assert edit.edit_ratio == pytest.approx(2 / 8)


def test_levenshtein():
    assert levenshtein(list("kitten"), list("sitting")) == 3
    assert levenshtein([], ["a", "b"]) == 2
    assert levenshtein(["a", "b"], ["a", "b"]) == 0


def _edited(tokens: list[str], alphabet: list[str], rng: random.Random) -> list[str]:
    """`tokens` with a few insertions, deletions and substitutions anywhere in it."""
    tokens = list(tokens)
    for _ in range(rng.randint(1, 12)):
        position = rng.randint(0, len(tokens))
        kind = rng.choice(("insert", "delete", "substitute"))
        if kind == "insert" or position == len(tokens):
            tokens.insert(position, rng.choice(alphabet))
        elif kind == "delete":
            del tokens[position]
        else:
            tokens[position] = rng.choice(alphabet)
    return tokens


@pytest.mark.parametrize("seed", range(4))
def test_levenshtein_is_the_dp_tables_distance_on_random_sequences(seed):
    # Small alphabets make many matches (and many ties between the table's paths);
    # half the pairs are edits of one sequence, as x̂ is of x.
    rng = random.Random(seed)
    for _ in range(100):
        alphabet = [f"w{i}" for i in range(rng.choice((1, 2, 3, 4, 8, 40)))]
        a = rng.choices(alphabet, k=rng.randint(0, 300))
        if rng.random() < 0.5:
            b = _edited(a, alphabet, rng)
        else:
            b = rng.choices(alphabet, k=rng.randint(0, 300))
        assert levenshtein(a, b) == quadratic_levenshtein(a, b), (a, b)
        assert levenshtein(b, a) == levenshtein(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([], []),
        ([], ["a"] * 300),
        (["a", "b", "c"] * 100, ["a", "b", "c"] * 100),  # identical
        (["a", "b"] * 150, ["c", "d"] * 150),  # no token in common
        (["a", "b", "c"] * 100, ["b"]),  # one long, one short
        (["x"], ["a", "b", "c"] * 100),
        (["a"] * 300, ["a"] * 150),  # one token repeated
        (["a"] * 299 + ["b"], ["b"] + ["a"] * 299),
        (["a", "b"] * 150, ["b", "a"] * 150),
        ([str(i) for i in range(64)], [str(i) for i in range(1, 65)]),  # 64-bit boundaries
        (tuple("the cat sat on the mat"), tuple("a cat sat on a hat")),  # tuples, as diffed
    ],
)
def test_levenshtein_edge_cases(a, b):
    assert levenshtein(a, b) == quadratic_levenshtein(a, b)
    assert levenshtein(b, a) == quadratic_levenshtein(a, b)


def test_token_alignment_skips_changed_tokens(nlp):
    x, x_hat, edit = edit_of(nlp, TABLE_1_X, "A dog is not embraced by the woman.")
    alignment = token_alignment(x, x_hat, edit)
    assert alignment == {0: 0, 1: 1, 2: 2, 3: 4, 4: 5, 5: 6, 6: 7, 7: 8}


def test_to_dict_is_json_and_round_trips(nlp):
    _, _, edit = edit_of(nlp, "It is great for kids.", "It is not great for children.")
    data = json.loads(json.dumps(edit.to_dict()))
    assert data["ops"][0]["kind"] == "insert"
    assert data["ops"][0]["target_chars"] == [6, 28]
    assert Edit.from_dict(data) == edit


@pytest.mark.parametrize(
    ("x", "x_hat"),
    [
        (TABLE_1_X, "Three dogs are embraced by the woman."),
        (TABLE_1_X, "A dog is hugging the woman."),
        ("I really like it.", "I like it really."),
        ("First line.\n\nSecond  line isn't here.", "First line.\n\nSecond line is here!"),
        ("Café crème, très bien.", "Café noir, pas bien du tout."),
        ("Why can't you lose 5kg?", "How can I lose 5 kg quickly?"),
        # Changes after the last token of x or of x̂, spaces and line breaks behind it.
        ("The film was good.", "The film was good. I liked it a lot. "),
        ("The film was good and long.  ", "The film was good"),
        ("Good.", "Good. Very\n"),
    ],
)
def test_spans_cover_the_change_and_map_to_their_text(nlp, x, x_hat):
    x_doc, x_hat_doc, edit = edit_of(nlp, x, x_hat)
    assert edit.ops
    for op in edit.ops:
        assert x_doc[slice(*op.source)].text == op.removed
        assert x_hat_doc[slice(*op.target)].text == op.added
        if op.source[0] < op.source[1]:
            assert op.source_subtree[0] <= op.source[0] < op.source[1] <= op.source_subtree[1]
        if op.target[0] < op.target[1]:
            assert op.target_subtree[0] <= op.target[0] < op.target[1] <= op.target_subtree[1]
        assert x[slice(*op.source_chars)] == x_doc[slice(*op.source_subtree)].text
        assert x_hat[slice(*op.target_chars)] == x_hat_doc[slice(*op.target_subtree)].text
    assert 0.0 <= edit.edit_ratio <= 1.0


@pytest.mark.parametrize("text", ["", "Good.", "Good. ", "Good.\n\n", "Very  good  "])
def test_an_empty_span_after_the_last_token_sits_at_the_end_of_the_text(nlp, text):
    doc = nlp(text)
    assert char_span(doc, (len(doc), len(doc))) == (len(text), len(text))
