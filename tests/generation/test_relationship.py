import json

import pytest

from generation.edits import compute_edit
from generation.parsing import load_nlp
from generation.relationship import Relationship, relationship_of
from generation.tokens import GLOBAL, LEXICAL, NEGATION, QUANTIFIER, RESTRUCTURE

X = "A dog is embraced by the woman."


@pytest.fixture(scope="module")
def nlp():
    return load_nlp()


def test_figure_2_relationship(nlp):
    relationship = relationship_of(
        "sst-1", nlp("It is great for kids."), nlp("It is not great for children.")
    )
    assert relationship.base == "sst-1"
    assert relationship.removed == {"kid"}
    assert relationship.added == {"not", "child"}  # "not" kept although a stop word
    assert {"neg:PART", "acomp:ADJ", "pobj:NOUN"} <= relationship.tree
    assert relationship.code == NEGATION


def test_contraction_lemmatizes_to_not(nlp):
    relationship = relationship_of("k", nlp("It isn't fast."), nlp("It is fast."))
    assert relationship.removed == {"not"}
    assert relationship.added == frozenset()


def test_quantifier_words_survive_the_stop_list(nlp):
    relationship = relationship_of("k", nlp(X), nlp("Three dogs are embraced by the woman."))
    assert relationship.removed == {"dog"}
    assert relationship.added == {"three", "dog"}
    assert relationship.code == QUANTIFIER


def test_restructure_records_dependency_relabellings(nlp):
    relationship = relationship_of("k", nlp(X), nlp("A dog is hugging the woman."))
    assert relationship.code == RESTRUCTURE
    assert {"nsubjpass>nsubj", "auxpass>aux", "pobj>dobj"} <= relationship.tree
    assert (relationship.removed, relationship.added) == ({"embrace"}, {"hug"})


def test_similar_lexical_changes_share_components(nlp):
    # §4.1: "a man -> woman walks" and "the man -> woman is dancing" change the same text.
    first = relationship_of("a", nlp("A man walks."), nlp("A woman walks."))
    second = relationship_of("b", nlp("The man is dancing."), nlp("The woman is dancing."))
    assert (first.removed, first.added) == (second.removed, second.added) == ({"man"}, {"woman"})
    assert first.code == second.code == LEXICAL


def test_given_edit_and_code_are_used(nlp):
    x, x_hat = nlp(X), nlp("A dog is attacked by the woman.")
    relationship = relationship_of("k", x, x_hat, edit=compute_edit(x, x_hat), code=GLOBAL)
    assert relationship.code == GLOBAL
    assert relationship_of("k", x, x_hat).code == LEXICAL


def test_identity_is_empty_and_global(nlp):
    relationship = relationship_of("k", nlp(X), nlp(X))
    assert relationship == Relationship(
        base="k", removed=frozenset(), added=frozenset(), tree=frozenset(), code=GLOBAL
    )


def test_proper_nouns_keep_their_text(nlp):
    relationship = relationship_of("k", nlp("I went to Paris."), nlp("I went to New York."))
    assert relationship.removed == {"paris"}
    assert relationship.added == {"new", "york"}


def test_round_trip_through_json(nlp):
    relationship = relationship_of(
        "café-1", nlp("The café was lovely."), nlp("The café was not lovely.")
    )
    data = json.loads(json.dumps(relationship.to_dict(), ensure_ascii=False))
    assert data["added"] == sorted(relationship.added)
    assert Relationship.from_dict(data) == relationship


def test_to_dict_is_deterministic():
    relationship = Relationship(
        base="k",
        removed=frozenset({"b", "a"}),
        added=frozenset({"d", "c"}),
        tree=frozenset({"y", "x"}),
        code=LEXICAL,
    )
    assert relationship.to_dict() == {
        "base": "k",
        "removed": ["a", "b"],
        "added": ["c", "d"],
        "tree": ["x", "y"],
        "code": LEXICAL,
    }
