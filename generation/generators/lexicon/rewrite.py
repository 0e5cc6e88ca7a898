"""Rewrites a parsed sentence with tokens removed or replaced, keeping spacing, case, articles."""

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from spacy.tokens import Doc, Token

# What "n't" leaves behind when it goes: "ca|n't" is "can", "wo|n't" is "will".
_CONTRACTION_STEMS = {"ca": "can", "wo": "will", "sha": "shall", "ai": "is"}
# Punctuation that hugs the word before it: removing that word must not leave "a , b".
_CLOSING_PUNCTUATION = frozenset(",.;:!?)]}%…")
_VOWELS = frozenset("aeiou")


@dataclass(frozen=True)
class Rewritten:
    text: str
    starts: dict[int, int]  # token index in the doc -> char offset of that token in `text`


def match_case(word: str, like: str) -> str:
    """`word` cased as `like`: "GOOD" for "BAD", "Good" for "Bad", else as given."""
    if len(like) > 1 and like.isupper():
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _article_for(word: str, article: str) -> str:
    # By spelling, not sound ("an hour" stays wrong); the language model ranks the rest.
    chosen = "an" if word[:1].lower() in _VOWELS else "a"
    return match_case(chosen, article)


def rewrite(
    doc: Doc, *, remove: Collection[int] = (), replace: Mapping[int, str] | None = None
) -> Rewritten:
    """The text of `doc` without the tokens in `remove` and with `replace` words swapped in.

    Replacements take the case of the word they replace, and an "a"/"an" before a changed
    slot follows the word now after it. A removed first word hands its capital to the next.
    """
    replace = dict(replace or {})
    pieces: list[list[str]] = []  # [text, trailing whitespace] of each kept token
    kept: list[Token] = []
    capitalize_next = False
    for token in doc:
        if token.i in remove:
            _drop(token, pieces, kept)
            starts_sentence = token.is_sent_start or not pieces
            capitalize_next = capitalize_next or (starts_sentence and token.text[:1].isupper())
            continue
        text = replace.get(token.i, token.text)
        if token.i in replace:
            text = match_case(text, token.text)
        changed_neighbour = token.i in replace or (bool(kept) and kept[-1].i != token.i - 1)
        if changed_neighbour and kept and kept[-1].lower_ in ("a", "an"):
            pieces[-1][0] = _article_for(text, pieces[-1][0])
        if capitalize_next and text[:1].isalpha():
            text = text[:1].upper() + text[1:]
        capitalize_next = False
        if pieces and token.text[:1] in _CLOSING_PUNCTUATION and token.i - 1 in remove:
            pieces[-1][1] = ""
        pieces.append([text, token.whitespace_])
        kept.append(token)
    starts, text, offset = {}, [], 0
    for token, (piece, space) in zip(kept, pieces, strict=True):
        starts[token.i] = offset
        text.append(piece + space)
        offset += len(piece) + len(space)
    return Rewritten(text="".join(text).rstrip(), starts=starts)


def _drop(token: Token, pieces: list[list[str]], kept: list[Token]) -> None:
    if not pieces:
        return
    if token.lower_ == "n't" and kept[-1].i == token.i - 1:
        stem = _CONTRACTION_STEMS.get(kept[-1].lower_)
        if stem is not None:
            pieces[-1][0] = match_case(stem, pieces[-1][0])
    if not pieces[-1][1]:
        # "do|n't like" -> "do like": the word glued to the removed one takes its space.
        pieces[-1][1] = token.whitespace_


def removal_span(token: Token) -> set[int]:
    """The token, and the separator that listed it before or after a fellow modifier:
    "an awful, boring film" loses "awful,", "a clever and witty film" loses "clever and",
    "a boring, awful film" loses ", awful"; never "an , boring" or "a and witty"."""
    doc, i = token.doc, token.i

    def fellow(other: Token) -> bool:
        same_slot = other.head.i == token.head.i and other.dep_ == token.dep_
        return same_slot or (other.head.i == i and other.dep_ == "conj")

    def separator(other: Token) -> bool:
        return other.text == "," or other.dep_ == "cc"

    if i + 2 < len(doc) and separator(doc[i + 1]) and fellow(doc[i + 2]):
        return {i, i + 1}
    if i >= 2 and doc[i - 1].text == "," and fellow(doc[i - 2]):
        return {i - 1, i}
    return {i}
