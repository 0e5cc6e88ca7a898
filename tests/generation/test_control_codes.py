import pytest

from generation.control_codes import MAX_EDIT_RATIO, PRIORITY, detect_code, detect_op_codes
from generation.edits import compute_edit
from generation.parsing import load_nlp
from generation.tokens import (
    CONTROL_CODES,
    DELETE,
    GLOBAL,
    INSERT,
    LEXICAL,
    NEGATION,
    QUANTIFIER,
    RESEMANTIC,
    RESTRUCTURE,
    SHUFFLE,
)

X = "A dog is embraced by the woman."


@pytest.fixture(scope="module")
def nlp():
    return load_nlp()


def code_of(nlp, x: str, x_hat: str) -> str:
    return detect_code(nlp(x), nlp(x_hat))


@pytest.mark.parametrize(
    ("x", "x_hat", "code"),
    [
        (X, "A dog is not embraced by the woman.", NEGATION),
        (X, "Three dogs are embraced by the woman.", QUANTIFIER),
        (X, "A woman is embraced by the dog.", SHUFFLE),
        (X, "A dog is attacked by the woman.", LEXICAL),
        (X, "A dog is wrapped in a blanket.", RESEMANTIC),
        (X, "A dog is embraced by the little woman.", INSERT),
        ("A dog is embraced by the little woman.", X, DELETE),
        (X, "A dog is hugging the woman.", RESTRUCTURE),
    ],
)
def test_table_1_examples(nlp, x, x_hat, code):
    assert code_of(nlp, x, x_hat) == code


def test_figure_2_negation_beats_lexical(nlp):
    x, x_hat = nlp("It is great for kids."), nlp("It is not great for children.")
    edit = compute_edit(x, x_hat)
    assert detect_op_codes(x, x_hat, edit) == [NEGATION, LEXICAL]
    assert detect_code(x, x_hat, edit) == NEGATION


@pytest.mark.parametrize(
    ("x", "x_hat"),
    [
        ("The service is fast.", "The service isn't fast."),
        ("It isn't great, I think.", "It is great, I think."),
        ("He left.", "He never left."),
        ("Why do people lie?", "Why do people never lie?"),
        ("The movie was great.", "The movie was supposedly great."),
        ("She was happy.", "She was unhappy."),
        ("Are these reviews reliable?", "Are these reviews unreliable?"),
        ("There are many options.", "There are no options."),
        ("How can I lose weight without doing exercise?", "How can I lose weight by exercise?"),
        ("The movie was good. I liked it.", "The movie was good. I did not like it."),
        ("The café was lovely.", "The café was not lovely."),
        ("Good.", "Not good."),
    ],
)
def test_negation(nlp, x, x_hat):
    assert code_of(nlp, x, x_hat) == NEGATION


@pytest.mark.parametrize(
    ("x", "x_hat"),
    [
        ("Two women are sitting on a bench.", "A woman is sitting on a bench."),
        ("I have two cats.", "I have a cat."),
        ("A man walks.", "Two men walk."),
        ("Most people like it.", "Few people like it."),
        ("I like all the songs.", "I like some of the songs."),
        ("We need more time.", "We need less time."),
        ("Only one student passed the exam.", "Every student passed the exam."),
        ("The dog chased a cat.", "The dog chased cats."),
    ],
)
def test_quantifier(nlp, x, x_hat):
    assert code_of(nlp, x, x_hat) == QUANTIFIER


@pytest.mark.parametrize(
    ("x", "x_hat"),
    [
        (
            "Are TripAdvisor reviews more reliable than Yelp reviews?",
            "Are Yelp reviews more reliable than TripAdvisor reviews?",
        ),
        (
            "This film has a great cast and a weak script.",
            "This film has a weak cast and a great script.",
        ),
        ("John loves Mary.", "Mary loves John."),
        ("The movie is funny and touching.", "The movie is touching and funny."),
        ("I really like it.", "I like it really."),
        ("The dog that bit the man ran away.", "The man that bit the dog ran away."),
    ],
)
def test_shuffle(nlp, x, x_hat):
    assert code_of(nlp, x, x_hat) == SHUFFLE


@pytest.mark.parametrize(
    ("x", "x_hat"),
    [
        ("The woman embraced the dog.", "The dog was embraced by the woman."),
        ("The cat chased the mouse.", "The mouse was chased by the cat."),
        ("The waiter brought our food quickly.", "Our food was brought quickly by the waiter."),
        (
            "The children were told a story by their teacher.",
            "Their teacher told the children a story.",
        ),
    ],
)
def test_restructure(nlp, x, x_hat):
    assert code_of(nlp, x, x_hat) == RESTRUCTURE


@pytest.mark.parametrize(
    ("x", "x_hat"),
    [
        ("She bought a red car.", "She bought a blue car."),
        ("I loved the soundtrack.", "I hated the soundtrack."),
        ("We ate dinner at home.", "We ate lunch at home."),
        ("I went to Paris last year.", "I went to New York last year."),
        ("The film is a masterpiece.", "The film is a total disaster."),
        ("It was the best meal I have ever had.", "It was the worst meal I have ever had."),
    ],
)
def test_lexical(nlp, x, x_hat):
    assert code_of(nlp, x, x_hat) == LEXICAL


@pytest.mark.parametrize(
    ("x", "x_hat"),
    [
        ("His surfboard is beneath him.", "His surfboard is lying on him."),
        ("The book is on the table.", "The book is in my bag."),
        ("The man who wore a hat smiled.", "The man wearing a hat smiled."),
        ("We ate dinner at home.", "We ate dinner at the new restaurant downtown."),
    ],
)
def test_resemantic(nlp, x, x_hat):
    assert code_of(nlp, x, x_hat) == RESEMANTIC


@pytest.mark.parametrize(
    ("x", "x_hat"),
    [
        ("She bought a red car.", "She bought a red car yesterday."),
        ("The food was delicious.", "The food was delicious and cheap."),
        ("The plot is predictable.", "The plot is somewhat predictable."),
        ("A dog is embraced.", X),
    ],
)
def test_insert(nlp, x, x_hat):
    assert code_of(nlp, x, x_hat) == INSERT


@pytest.mark.parametrize(
    ("x", "x_hat"),
    [
        ("She bought a red car.", "She bought a car."),
        ("The soup is too salty.", "The soup is salty."),
        ("A man is playing a guitar on stage.", "A man is playing a guitar."),
        (X, "A dog is embraced."),
    ],
)
def test_delete(nlp, x, x_hat):
    assert code_of(nlp, x, x_hat) == DELETE


@pytest.mark.parametrize(
    ("x", "x_hat"),
    [
        (X, X),  # identity
        ("Great movie.", "great movie."),  # case only: no edit
        ("Great movie.", "Great movie!"),  # punctuation only
        ("Great movie.", "Great  movie."),  # whitespace only
        ("", ""),
        ("", "Hello world."),
        ("Hi.", ""),
        (X, "Stock prices fell sharply on Monday."),  # a different sentence
        ("It is good.", "They went home."),
        (
            "The movie was great.",
            "The movie that I saw yesterday with my friends in the big theater downtown was great.",
        ),
    ],
)
def test_global(nlp, x, x_hat):
    assert code_of(nlp, x, x_hat) == GLOBAL


def test_edit_is_computed_when_not_given(nlp):
    x, x_hat = nlp(X), nlp("Three dogs are embraced by the woman.")
    assert detect_code(x, x_hat) == detect_code(x, x_hat, compute_edit(x, x_hat)) == QUANTIFIER


def test_op_codes_follow_op_order(nlp):
    x, x_hat = nlp("The woman embraced the dog."), nlp("The dog was embraced by the woman.")
    edit = compute_edit(x, x_hat)
    codes = detect_op_codes(x, x_hat, edit)
    assert len(codes) == len(edit.ops)
    assert set(codes) == {RESTRUCTURE}


def test_punctuation_only_op_is_global_but_does_not_hide_others(nlp):
    x, x_hat = nlp("Great movie."), nlp("Not a great movie!")
    edit = compute_edit(x, x_hat)
    assert detect_op_codes(x, x_hat, edit)[-1] == GLOBAL
    assert detect_code(x, x_hat, edit) == NEGATION


def test_large_edit_ratio_is_global(nlp):
    x, x_hat = nlp(X), nlp("A cat sleeps on the warm sofa all day.")
    edit = compute_edit(x, x_hat)
    assert edit.edit_ratio > MAX_EDIT_RATIO
    assert detect_code(x, x_hat, edit) == GLOBAL


def test_priority_ranks_every_code_once():
    assert sorted(PRIORITY) == sorted(CONTROL_CODES)
    assert PRIORITY.index(NEGATION) < PRIORITY.index(LEXICAL)
    assert 0 < MAX_EDIT_RATIO < 1
