"""The opinion lexicon: positive and negative English words, derived from VADER's lexicon.

The paper's Algorithm 1 takes positive and negative word dictionaries (POS, NEG).
Ours come from `vader_lexicon.txt`, which the `vaderSentiment` wheel ships: each
entry has a mean valence rated by ten people on -4..4, and a single word whose
valence reaches `min_valence` in either direction is an opinion word of that sign.
Replacement words are further kept clear of profanity and slurs (VADER rates many
of them), using the word list that the `better-profanity` wheel ships.
"""

import functools
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

POSITIVE = "positive"
NEGATIVE = "negative"

# Negations are handled as phrases (see terms.py), never as opinion words: VADER rates
# "no" at -1.2, which would make every "no" an opinion word of its own.
NEGATION_WORDS = frozenset(
    {"no", "not", "n't", "never", "nor", "none", "nothing", "nobody", "nowhere", "neither"}
)

_SINGLE_WORD = re.compile(r"[a-z][a-z'-]*[a-z]")
# Inflections of a listed word are as offensive as the word ("jerks", "bitchy").
_INFLECTIONS = ("s", "es", "ed", "d", "ing", "er", "ers", "y", "ies", "ier", "iest", "ily", "ish")


class LexiconUnavailable(RuntimeError):
    """A package that ships a word list is not installed."""


def opposite(polarity: str) -> str:
    return NEGATIVE if polarity == POSITIVE else POSITIVE


@dataclass(frozen=True)
class OpinionLexicon:
    positive: frozenset[str]
    negative: frozenset[str]

    def polarity(self, word: str) -> str | None:
        """POSITIVE, NEGATIVE or None for a lower-cased word."""
        if word in self.positive:
            return POSITIVE
        if word in self.negative:
            return NEGATIVE
        return None

    def words(self, polarity: str) -> frozenset[str]:
        return self.positive if polarity == POSITIVE else self.negative


def _package_file(package: str, filename: str, install: str) -> Path:
    # find_spec locates the wheel's files without running the package's import-time code.
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise LexiconUnavailable(f"{filename} ships in a package that is missing: {install}")
    path = Path(next(iter(spec.submodule_search_locations))) / filename
    if not path.is_file():
        raise LexiconUnavailable(f"{path} is missing; reinstall: {install}")
    return path


@functools.cache
def vader_valences() -> dict[str, float]:
    """Every single-word entry of VADER's lexicon and its mean valence (-4..4)."""
    path = _package_file("vaderSentiment", "vader_lexicon.txt", "pip install vaderSentiment==3.3.2")
    valences = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        entry, valence, *_ = line.split("\t")
        if _SINGLE_WORD.fullmatch(entry):
            valences[entry] = float(valence)
    return valences


@functools.cache
def opinion_lexicon(min_valence: float = 1.0) -> OpinionLexicon:
    """Words whose VADER valence is at least `min_valence` away from neutral, by sign."""
    valences = vader_valences()
    words = {word: value for word, value in valences.items() if word not in NEGATION_WORDS}
    return OpinionLexicon(
        positive=frozenset(word for word, value in words.items() if value >= min_valence),
        negative=frozenset(word for word, value in words.items() if value <= -min_valence),
    )


@functools.cache
def _profanities() -> frozenset[str]:
    path = _package_file(
        "better_profanity", "profanity_wordlist.txt", "pip install better-profanity==0.7.0"
    )
    lines = path.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip().lower() for line in lines if line.strip())


def is_profane(word: str) -> bool:
    listed = _profanities()
    if word in listed:
        return True
    for suffix in _INFLECTIONS:
        if not word.endswith(suffix):
            continue
        stem = word[: -len(suffix)]
        # "crappy" doubles the consonant of "crap" before the suffix.
        if stem in listed or (len(stem) > 2 and stem[-1] == stem[-2] and stem[:-1] in listed):
            return True
    return False


@functools.cache
def replacement_words(min_valence: float, polarity: str) -> tuple[str, ...]:
    """The words of `polarity` a replacement may use, sorted so that ties break the same way."""
    lexicon = opinion_lexicon(min_valence)
    return tuple(sorted(word for word in lexicon.words(polarity) if not is_profane(word)))
