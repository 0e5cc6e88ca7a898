"""Finds the candidate causal terms of a parsed sentence: opinion words and negation phrases.

Section 3.1 of the paper scores single words and "phrases beginning with negative
limitations" ("not satisfy you"). A negation flips the opinion word it scopes over,
so "not a bad film" holds one positive term, the phrase, and "bad" counts as
positive too when a replacement is sought ("not a good film" flips it).
"""

from dataclasses import dataclass

from spacy.tokens import Doc, Token

from generation.generators.lexicon.opinion_lexicon import (
    NEGATION_WORDS,
    NEGATIVE,
    OpinionLexicon,
    opposite,
)

WORD = "word"
NEGATION = "negation"

# Parts of speech that carry an opinion; "like" as a preposition or "please" as an
# interjection are in VADER's lexicon but say nothing about the review.
_OPINION_POS = frozenset({"ADJ", "ADV", "VERB", "NOUN"})
_CONTENT_POS = frozenset({"VERB", "ADJ", "NOUN", "PROPN", "ADV"})
# Dependencies whose removal leaves a grammatical sentence: modifiers, and "compound"
# for adjectives the small parser tags as nouns ("superb cast"). Removing a predicate
# ("The film was great.") or a conjunct leaves a hole.
_REMOVABLE_DEPS = frozenset({"amod", "advmod", "npadvmod", "compound"})
# A bare negation ("should not be remade") reads as negative, as VADER rates "no".
BARE_NEGATION_POLARITY = NEGATIVE


@dataclass(frozen=True)
class CausalTerm:
    """One candidate causal term of a sentence and how an edit reaches it."""

    kind: str  # WORD or NEGATION
    masked: tuple[int, ...]  # token indices masked out to measure its importance (Eq. 1)
    edited: int  # the token RM-CT removes or REP-CT replaces
    polarity: str  # the sentiment it expresses here, negation applied
    word_polarity: str | None  # the lexicon's polarity of the edited word; None for a negation
    text: str  # the phrase, for the candidate's metadata
    removable: bool  # removing `edited` leaves a grammatical sentence
    replaceable: bool  # `edited` is an opinion word that REP-CT may swap


def opinion_polarity(token: Token, lexicon: OpinionLexicon) -> str | None:
    """The lexicon polarity of an opinion word in context, or None for any other token."""
    # A lower-case "proper noun" is the tagger meeting a rare word ("abandon", "hug").
    misread_noun = token.pos_ == "PROPN" and token.text.islower()
    if (token.pos_ not in _OPINION_POS and not misread_noun) or token.lower_ in NEGATION_WORDS:
        return None
    if _is_degree_modifier(token) or _is_preposition_idiom(token):
        return None
    return lexicon.form_polarity(token.lower_, token.tag_, token.lemma_.lower())


def _is_degree_modifier(token: Token) -> bool:
    # "pretty bad", "terribly good": the adverb grades the adjective, it has no opinion.
    return (
        token.pos_ == "ADV"
        and token.dep_ == "advmod"
        and token.head.pos_ in ("ADJ", "ADV")
        and token.i < token.head.i
    )


def _is_preposition_idiom(token: Token) -> bool:
    # "thanks to his skills" credits a cause; it is no opinion of its own.
    following = token.nbor(1) if token.i + 1 < len(token.doc) else None
    return token.lower_ == "thanks" and following is not None and following.lower_ == "to"


def is_removable_negation(token: Token) -> bool:
    """not, n't, never, and "no" as a determiner ("no laughs"): words whose removal un-negates."""
    if token.lower_ in ("not", "n't", "never"):
        return token.dep_ in ("neg", "advmod")
    return token.lower_ == "no" and token.dep_ in ("det", "neg")


def negation_scope(token: Token, window: int) -> list[Token]:
    """The tokens a negation reaches: up to `window` after it, stopping at a clause boundary."""
    scope = []
    for other in token.doc[token.i + 1 : token.i + 1 + window]:
        if other.is_sent_start or other.is_punct or other.pos_ in ("CCONJ", "SCONJ"):
            break
        scope.append(other)
    return scope


def find_terms(doc: Doc, lexicon: OpinionLexicon, negation_window: int = 4) -> list[CausalTerm]:
    """Every negation phrase and opinion word of `doc`, in text order."""
    terms: list[CausalTerm] = []
    negated: set[int] = set()
    for token in doc:
        if not is_removable_negation(token):
            continue
        scope = negation_scope(token, negation_window)
        opinion = next((t for t in scope if opinion_polarity(t, lexicon) is not None), None)
        if opinion is not None:
            end = opinion.i
            polarity = opposite(opinion_polarity(opinion, lexicon))
            negated.add(opinion.i)
        else:
            # "should not be remade": the phrase runs to the first content word it negates.
            content = next((t for t in scope if t.pos_ in _CONTENT_POS), None)
            end = content.i if content is not None else token.i + len(scope)
            polarity = BARE_NEGATION_POLARITY
        terms.append(
            CausalTerm(
                kind=NEGATION,
                masked=tuple(range(token.i, end + 1)),
                edited=token.i,
                polarity=polarity,
                word_polarity=None,
                text=doc[token.i : end + 1].text,
                removable=True,
                replaceable=False,
            )
        )
    for token in doc:
        polarity = opinion_polarity(token, lexicon)
        if polarity is None:
            continue
        is_negated = token.i in negated
        terms.append(
            CausalTerm(
                kind=WORD,
                masked=(token.i,),
                edited=token.i,
                polarity=opposite(polarity) if is_negated else polarity,
                word_polarity=polarity,
                text=token.text,
                # A negated word is reached by removing its negation, not itself.
                removable=not is_negated and token.dep_ in _REMOVABLE_DEPS,
                replaceable=True,
            )
        )
    return sorted(terms, key=lambda term: term.masked[0])
