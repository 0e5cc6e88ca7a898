"""Detects the primary control code of a pair (x, x̂) (Polyjuice Table 1, Appendix A.2)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from spacy.tokens import Doc, Token

from generation.edits import Edit, EditOp, compute_edit, is_word, token_alignment
from generation.parsing import per_doc
from generation.tokens import (
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

# Appendix A: crawled pairs were kept "as long as the editing is less than 60%";
# beyond that x̂ is a different sentence rather than a counterfactual of x.
MAX_EDIT_RATIO = 0.6
# A one- or two-word text cannot change by less than 100%, so edits this small
# are never "too large" ("Good." -> "Not good." is a negation, not global).
SMALL_EDIT_TOKENS = 2

# Appendix A.2: "the one that most significantly changes the semantic meaning".
# Polarity and quantity flip truth values; moving entities swaps roles; a new
# structure, phrase or word changes less; adding or dropping a constraint least.
PRIORITY = (NEGATION, QUANTIFIER, SHUFFLE, RESTRUCTURE, RESEMANTIC, LEXICAL, INSERT, DELETE)

NEGATION_WORDS = frozenset(
    {
        "not", "n't", "no", "never", "nobody", "nothing", "none", "nor", "neither",
        "nowhere", "without", "hardly", "barely", "scarcely", "cannot", "supposedly",
    }
)  # fmt: skip
NEGATING_PREFIXES = ("un", "in", "im", "il", "ir", "dis", "non", "non-")
# Quantifiers whatever their role in the parse.
QUANTIFIER_WORDS = frozenset(
    {"all", "some", "many", "every", "each", "several", "any", "both", "numerous",
     "multiple", "various", "couple", "dozen", "dozens"}
)  # fmt: skip
# Words that quantify only when they modify or stand for a noun: "more dogs" is a
# quantity, "more reliable" is a degree.
NOUN_QUANTIFIER_WORDS = frozenset(
    {"few", "fewer", "more", "most", "less", "least", "much", "lot", "lots", "half",
     "enough", "plenty"}
)  # fmt: skip
NOUN_MODIFIER_DEPS = frozenset({"det", "predet", "amod", "nummod", "quantmod"})
ARGUMENT_DEPS = frozenset({"nsubj", "nsubjpass", "dobj", "pobj", "attr", "appos"})
PASSIVE_SUBJECT_DEPS = frozenset({"auxpass", "nsubjpass", "csubjpass"})
PASSIVE_DEPS = PASSIVE_SUBJECT_DEPS | {"agent"}
# Shuffle compares content words only: function words recur by chance. (spaCy's
# stop list would also drop adverbs like "really", which do get moved.)
CONTENT_POS = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "ADV", "NUM", "INTJ"})
SHUFFLE_MIN_OVERLAP = 0.5
# Restructure needs this many relabelled neighbours (one alone is parser noise)...
RESTRUCTURE_MIN_CHANGES = 2
# ...and may bring at most this many content words new to x ("hugging").
RESTRUCTURE_MAX_NEW_WORDS = 2
LEXICAL_MAX_TOKENS = 4
LEXICAL_MAX_CONTENT = 2  # "total disaster", "New York"


@dataclass(frozen=True)
class _OpView:
    """The tokens of one op in both docs, and the unchanged words around it."""

    removed: tuple[Token, ...]
    added: tuple[Token, ...]
    neighbours: tuple[tuple[Token, Token], ...]  # aligned (x, x̂) tokens next to the change


def detect_code(x: Doc, x_hat: Doc, edit: Edit | None = None) -> str:
    """The primary control code of (x, x̂), or `global` when none fits."""
    edit = edit or compute_edit(x, x_hat)
    # Nothing to perturb, or nothing left: no code describes it.
    if edit.is_identity or not any(map(is_word, x)) or not any(map(is_word, x_hat)):
        return GLOBAL
    if _too_large(x, x_hat, edit):
        return GLOBAL
    codes = [code for code in detect_op_codes(x, x_hat, edit) if code != GLOBAL]
    return min(codes, key=PRIORITY.index) if codes else GLOBAL


def detect_op_codes(x: Doc, x_hat: Doc, edit: Edit) -> list[str]:
    """The code of each op, in op order (`global` for punctuation-only ops)."""
    alignment = token_alignment(x, x_hat, edit)
    backward = {j: i for i, j in alignment.items()}
    views = [_op_view(x, x_hat, op, alignment, backward) for op in edit.ops]
    x_lemmas = _word_lemmas(x)
    voice_changed = _passive_count(x) != _passive_count(x_hat)
    codes = []
    for index, view in enumerate(views):
        others = [other for position, other in enumerate(views) if position != index]
        codes.append(_op_code(view, others, x_lemmas, voice_changed))
    return codes


def _too_large(x: Doc, x_hat: Doc, edit: Edit) -> bool:
    """Appendix A.2: "if the editing distance is too large, we denote it with global"."""
    if edit.edit_ratio <= MAX_EDIT_RATIO or edit.token_distance <= SMALL_EDIT_TOKENS:
        return False
    # A token diff overstates agreement ("A man walks" -> "Two men walk" changes
    # every token) and reordering (passive <-> active); the pair is only too far
    # apart if its content words differ too, as a bag of lemmas.
    x_words = Counter(_lemma(token) for token in x if token.pos_ in CONTENT_POS)
    y_words = Counter(_lemma(token) for token in x_hat if token.pos_ in CONTENT_POS)
    larger = max(x_words.total(), y_words.total())
    kept = (x_words & y_words).total()
    return larger > 0 and 1 - kept / larger > MAX_EDIT_RATIO


def _op_code(
    view: _OpView, others: Sequence[_OpView], x_lemmas: frozenset[str], pair_voice_changed: bool
) -> str:
    removed = [token for token in view.removed if is_word(token)]
    added = [token for token in view.added if is_word(token)]
    if not removed and not added:
        return GLOBAL
    if _changes_negation(removed, added):
        return NEGATION
    if _changes_quantity(removed, added):
        return QUANTIFIER
    voice_changed = pair_voice_changed and _touches_voice(view)
    # Under a voice change, arguments move because the structure changed.
    if not voice_changed and _moves_words(removed, added, others):
        return SHUFFLE
    if _changes_structure(view, added, x_lemmas, voice_changed):
        return RESTRUCTURE
    if not removed:
        return INSERT
    if not added:
        return DELETE
    if _same_word_slot(removed, added):
        return LEXICAL
    return RESEMANTIC


def _changes_negation(removed: Sequence[Token], added: Sequence[Token]) -> bool:
    # Appendix A.2: "changes on negation modifiers or specific words like supposedly".
    if sum(map(is_negation, removed)) != sum(map(is_negation, added)):
        return True
    return any(_negated_form(old, new) for old in removed for new in added)


def is_negation(token: Token) -> bool:
    """A negation modifier or a negating word (Appendix A.2)."""
    return token.dep_ == "neg" or token.lower_ in NEGATION_WORDS


def _negated_form(old: Token, new: Token) -> bool:
    """A word and its negated form: "reliable" and "unreliable", "possible" and "impossible"."""
    if old.pos_ != new.pos_ or old.pos_ not in ("ADJ", "ADV"):
        return False
    short, long = sorted((old.lower_, new.lower_), key=len)
    return len(short) >= 3 and any(long == prefix + short for prefix in NEGATING_PREFIXES)


def _changes_quantity(removed: Sequence[Token], added: Sequence[Token]) -> bool:
    if any(is_quantifier(token) for token in (*removed, *added)):
        return True
    # "a dog" -> "dogs": the same noun flips between singular and plural.
    return any(
        old.lemma_.lower() == new.lemma_.lower() and _is_plural(old) != _is_plural(new)
        for old in removed
        if old.pos_ in ("NOUN", "PROPN")
        for new in added
        if new.pos_ in ("NOUN", "PROPN")
    )


def is_quantifier(token: Token) -> bool:
    """A number, or a determiner or pronoun that states how many or how much."""
    if token.lower_ == "all" and token.head.lower_ == "at":
        return False  # "not ... at all" intensifies a negation, it counts nothing
    if token.tag_ == "CD" or (token.like_num and token.pos_ == "NUM"):
        return True
    if token.lower_ in QUANTIFIER_WORDS:
        return True
    if token.lower_ not in NOUN_QUANTIFIER_WORDS:
        return False
    modifies_noun = token.dep_ in NOUN_MODIFIER_DEPS and token.head.pos_ in ("NOUN", "PROPN")
    return modifies_noun or token.pos_ == "DET" or token.dep_ in ARGUMENT_DEPS


def _is_plural(token: Token) -> bool:
    return "Plur" in token.morph.get("Number") or token.tag_ in ("NNS", "NNPS")


def _moves_words(
    removed: Sequence[Token], added: Sequence[Token], others: Sequence[_OpView]
) -> bool:
    # Appendix A.2: "overlaps between tokens deleted and added". Within one op the
    # diff never leaves a shared token unmatched, so the overlap is with other ops.
    removed_elsewhere = {_content(t) for other in others for t in other.removed} - {None}
    added_elsewhere = {_content(t) for other in others for t in other.added} - {None}
    mine = [(_content(t), added_elsewhere) for t in removed] + [
        (_content(t), removed_elsewhere) for t in added
    ]
    mine = [(word, pool) for word, pool in mine if word is not None]
    if not mine:
        return False
    moved = sum(word in pool for word, pool in mine)
    return moved > 0 and moved / len(mine) >= SHUFFLE_MIN_OVERLAP


@per_doc
def _passive_count(doc: Doc) -> int:
    """How many clauses are passive (a dropped "by the woman" leaves them passive)."""
    return len({token.head.i for token in doc if token.dep_ in PASSIVE_SUBJECT_DEPS})


def _touches_voice(view: _OpView) -> bool:
    """Whether this op holds the verb or the passive markers of a voice change."""
    tokens = [*view.removed, *view.added, *(token for pair in view.neighbours for token in pair)]
    return any(token.dep_ in PASSIVE_DEPS or token.pos_ == "VERB" for token in tokens)


def _changes_structure(
    view: _OpView, added: Sequence[Token], x_lemmas: frozenset[str], voice_changed: bool
) -> bool:
    # Table 1: restructure alters the tree "while content words largely stay".
    new_words = {_lemma(token) for token in added if token.pos_ in CONTENT_POS} - x_lemmas
    if len(new_words) > RESTRUCTURE_MAX_NEW_WORDS:
        return False
    if voice_changed:
        return True
    relabelled = sum(
        old.dep_ != new.dep_ for old, new in view.neighbours if is_word(old) and is_word(new)
    )
    return relabelled >= RESTRUCTURE_MIN_CHANGES


def _same_word_slot(removed: Sequence[Token], added: Sequence[Token]) -> bool:
    """Table 1 lexical: one word or noun chunk swapped "without breaking the POS tags"."""
    if max(len(removed), len(added)) > LEXICAL_MAX_TOKENS:
        return False
    if len(removed) == len(added) == 1:
        old, new = removed[0], added[0]
        # The tagger wavers between ADJ and VERB for "boring"/"engaging"; the same
        # dependency slot shows the word class is unchanged.
        return _word_class(old) == _word_class(new) or old.dep_ == new.dep_
    # Noun chunks may differ in length ("Paris" -> "New York"); their heads may not,
    # and a chunk with many content words is a new phrase, not a word swap.
    return (
        _one_chunk(removed)
        and _one_chunk(added)
        and _word_class(_head_of(removed)) == _word_class(_head_of(added))
        and max(_content_count(removed), _content_count(added)) <= LEXICAL_MAX_CONTENT
    )


def _content_count(tokens: Sequence[Token]) -> int:
    return sum(token.pos_ in CONTENT_POS for token in tokens)


def _word_class(token: Token) -> str:
    return "NOUN" if token.pos_ == "PROPN" else token.pos_


def _one_chunk(tokens: Sequence[Token]) -> bool:
    chunks = {_chunk_start(token) for token in tokens}
    return len(chunks) == 1 and None not in chunks


def _head_of(tokens: Sequence[Token]) -> Token:
    """The token of `tokens` whose head lies outside them (the first such one)."""
    inside = {token.i for token in tokens}
    return next((t for t in tokens if t.head.i not in inside or t.head.i == t.i), tokens[0])


def _chunk_start(token: Token) -> int | None:
    return next((start for start, end in _noun_chunks(token.doc) if start <= token.i < end), None)


@per_doc
def _noun_chunks(doc: Doc) -> tuple[tuple[int, int], ...]:
    """[start, end) of each noun chunk; none without a dependency parse."""
    if not doc.has_annotation("DEP"):
        return ()
    return tuple((chunk.start, chunk.end) for chunk in doc.noun_chunks)


def _op_view(
    x: Doc, x_hat: Doc, op: EditOp, alignment: dict[int, int], backward: dict[int, int]
) -> _OpView:
    removed = tuple(x[op.source[0] : op.source[1]])
    added = tuple(x_hat[op.target[0] : op.target[1]])
    # Unchanged words whose attachment the change could have altered: heads and
    # children of the changed tokens, on either side, and their twins.
    near_x = {t.i for token in removed for t in (token.head, *token.children)} | {
        backward[t.i] for token in added for t in (token.head, *token.children) if t.i in backward
    }
    pairs = tuple((x[i], x_hat[alignment[i]]) for i in sorted(near_x) if i in alignment)
    return _OpView(removed=removed, added=added, neighbours=pairs)


@per_doc
def _word_lemmas(doc: Doc) -> frozenset[str]:
    return frozenset(_lemma(token) for token in doc if is_word(token))


def _lemma(token: Token) -> str:
    return (token.lemma_ or token.text).lower()


def _content(token: Token) -> str | None:
    """The moved-word key of a token: its lower-cased text, if it is a content word."""
    if token.pos_ not in CONTENT_POS:
        return None
    return token.lower_
