"""The relationship r(x̂) of Polyjuice §4.1 as a plain record for selection."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from spacy.tokens import Doc, Token

from generation.control_codes import detect_code, is_negation, is_quantifier
from generation.edits import Bounds, Edit, compute_edit, is_word, token_alignment
from generation.parsing import per_doc


@dataclass(frozen=True)
class Relationship:
    """§4.1: "the base x, tokens removed from x, added to x̂, the affected parsing
    tree structure, and the corresponding control code"."""

    base: str  # key of the original x
    removed: frozenset[str]  # lower-cased lemmas of the content words removed
    added: frozenset[str]
    tree: frozenset[str]  # "dep:POS" of the changed phrases' roots, "old>new" relabellings
    code: str

    def to_dict(self) -> dict:
        return {
            "base": self.base,
            "removed": sorted(self.removed),
            "added": sorted(self.added),
            "tree": sorted(self.tree),
            "code": self.code,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Relationship:
        return cls(
            base=data["base"],
            removed=frozenset(data["removed"]),
            added=frozenset(data["added"]),
            tree=frozenset(data["tree"]),
            code=data["code"],
        )


def relationship_of(
    base: str, x: Doc, x_hat: Doc, edit: Edit | None = None, code: str | None = None
) -> Relationship:
    """r(x̂) for one candidate x̂ of the original keyed `base`."""
    edit = edit or compute_edit(x, x_hat)
    code = code or detect_code(x, x_hat, edit)
    removed = [token for op in edit.ops for token in x[op.source[0] : op.source[1]]]
    added = [token for op in edit.ops for token in x_hat[op.target[0] : op.target[1]]]
    tree = {
        *(label for op in edit.ops for label in _root_labels(x, op.source_subtree)),
        *(label for op in edit.ops for label in _root_labels(x_hat, op.target_subtree)),
        *_relabellings(x, x_hat, edit),
    }
    return Relationship(
        base=base,
        removed=frozenset(_keys(removed)),
        added=frozenset(_keys(added)),
        tree=frozenset(tree),
        code=code,
    )


def _keys(tokens: Iterable[Token]) -> set[str]:
    # "kids" and "kid" are the same change for diversity; negations and quantifiers
    # must survive although they are stop words ("great -> not great" is all "not").
    keys = set()
    for token in tokens:
        if not is_word(token):
            continue
        if token.is_stop and not (is_negation(token) or is_quantifier(token)):
            continue
        lemma = token.lemma_ if token.pos_ != "PROPN" and token.lemma_ else token.text
        keys.add(lemma.lower())
    return keys


def _root_labels(doc: Doc, span: Bounds) -> set[str]:
    """The "dep:POS" of each token of the span attached outside it (the phrase roots)."""
    start, end = span
    return {
        f"{token.dep_}:{token.pos_}"
        for token in doc[start:end]
        if not (start <= token.head.i < end) or token.head.i == token.i
    }


def _relabellings(x: Doc, x_hat: Doc, edit: Edit) -> set[str]:
    """Unchanged words whose dependency label changed: the structural part of r(x̂)."""
    (x_deps, x_words), (y_deps, _) = _labels(x), _labels(x_hat)
    return {
        f"{x_deps[i]}>{y_deps[j]}"
        for i, j in token_alignment(x, x_hat, edit).items()
        if x_words[i] and x_deps[i] != y_deps[j]
    }


@per_doc
def _labels(doc: Doc) -> tuple[tuple[str, ...], tuple[bool, ...]]:
    """Each token's dependency label, and whether it is a word."""
    return tuple(token.dep_ for token in doc), tuple(is_word(token) for token in doc)
