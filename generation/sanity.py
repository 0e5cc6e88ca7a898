"""Sanity filters: drop a candidate x̂ that is broken as a sentence, whatever its fluency.

Issue #21, item 2. Each filter compares x̂ with its original x and returns its reason
name (what `AnnotatedCandidate.dropped_by` then holds) or None; `sanity_reason` applies
them in the order of `REASONS` and returns the first that fires. Every rule asks for
something x does not do itself, so a candidate is never dropped for a quirk it
inherited from its original. The thresholds, and why:

- `outside_blanks`: an infill candidate (its `prompt` is x with [BLANK]s, not the
  whole-sentence "[BLANK]") must contain every text between the blanks, in order
  (case and runs of whitespace ignored). Filling blanks cannot change that text, so
  any difference means the generator rewrote more than it was asked to.
- `near_copy`: x̂ has the same letters and digits as x, in order (only case,
  punctuation or spacing differ). Exact copies are `dedupe`'s "copies" already.
- `truncated`: x ends with sentence-final punctuation (. ! ? …, a closing quote or
  bracket allowed after it) and x̂ does not; or x̂ ends on a word that cannot end an
  English sentence (an article, a conjunction, "of", a possessive determiner) where x
  did not; or x̂ is x's first words, cut to half of them or fewer, with no final
  punctuation (a shortened x̂ that ends its sentence is a deletion, not a cut).
- `run_on`: x̂ has more than 2 * x's words + 10, or more sentence ends followed by
  more text (". The") than x: the generator ran past the end of the sentence.
- `repeated_ngram`: one word three times in a row, an article, preposition or
  conjunction twice in a row ("the the"), two or three words twice back to back ("was
  great was great"), or four words twice anywhere; none of which x has. ("very very"
  and "had had" are English, "the the" is not; a trigram twice apart is too, in
  parallel clauses: "I'll never retire ... and I'll never become sick".)
- `non_word`: one alphabetic word in lower case that is in no word list and not in x.
  The list is lemminflect's lexicon with its inflections (a pinned dependency, so
  present wherever cfannotate runs), spaCy's English stop words and the pieces its
  tokenizer cuts contractions into ("gon", "na"), the lower-case words of 4+ letters
  in the spaCy model's own string store ("iconic" is not in lemminflect), all three
  pinned, and VADER's lexicon when installed
  (slang: "meh", "lol"). Capitalized words (names, titles), numbers, interjections
  (POS INTJ: "huh") and a known word behind a productive prefix ("unfunny") pass.
  Without lemminflect the filter passes everything (`WORD_LIST_SOURCES` says which
  lists loaded).
- `fragment`: a sentence of x has a verb or auxiliary as its root (spaCy POS VERB or
  AUX) and x̂ has no verb or auxiliary at all. (Any verb of x would be too eager: in
  "Fast paced and funny satire" the tagger's VERB "paced" is an adjective.)

On 200 human counterfactuals of CAD's sentiment dev set (the first sentence of each
revised review against the original's first sentence) 98 % pass every filter
(tests/generation/test_sanity.py measures it).
"""

from __future__ import annotations

import csv
import functools
import gzip
import itertools
import json
import re
from importlib import resources

from spacy.tokens import Doc, Token

from generation.edits import Edit, is_word
from generation.parsing import SPACY_MODEL, per_doc
from generation.records import CandidateRecord
from generation.tokens import BLANK

OUTSIDE_BLANKS = "outside_blanks"
NEAR_COPY = "near_copy"
TRUNCATED = "truncated"
RUN_ON = "run_on"
REPEATED_NGRAM = "repeated_ngram"
NON_WORD = "non_word"
FRAGMENT = "fragment"
# The order `sanity_reason` applies them in: the generator's own contract first, then
# from the cheapest and surest check to the one that leans most on the parse.
REASONS = (OUTSIDE_BLANKS, NEAR_COPY, TRUNCATED, RUN_ON, REPEATED_NGRAM, NON_WORD, FRAGMENT)

WORD_RUN = 3  # the same word this many times in a row
REPEATED_ANYWHERE = 4  # an n-gram this long twice anywhere; shorter ones back to back
RUN_ON_FACTOR = 2  # x̂ may have up to 2 * x's words...
RUN_ON_SLACK = 10  # ...plus 10 before it is a run-on
TRUNCATED_FRACTION = 0.5  # x̂ that is x's first words, half of them or fewer
# Closing quotes (straight and curly) and brackets may follow the final punctuation.
FINAL_PUNCTUATION = re.compile("(?:[.!?\u2026])[\"'\u201d\u2019)\\]]*$")
SENTENCE_END = frozenset({".", "!", "?", "...", "…", "!!", "??", "?!", "!?"})
# Words that leave a sentence open when they end it.
DANGLING_WORDS = frozenset(
    {"the", "a", "an", "and", "or", "but", "nor", "of", "my", "your", "his", "their",
     "its", "our"}
)  # fmt: skip
# Parts of speech whose doubling ("the the", "of of") is a generation artefact.
NO_DOUBLE_POS = frozenset({"DET", "ADP", "CCONJ"})
NO_DOUBLE_EXCEPT = frozenset({"that"})  # "he said that that was fine"
VERB_POS = frozenset({"VERB", "AUX"})
# Prefixes spaCy cuts off at a hyphen ("non-exhibitionist" is "non", "-", ...).
HYPHEN_PREFIXES = frozenset(
    {"non", "anti", "semi", "pre", "post", "co", "ex", "multi", "pseudo", "quasi", "mid"}
)
# The spaCy model's strings hold fragments of its training text ("ber", "oxx"); words
# this long are words.
MODEL_WORD_MIN = 4
WORD_PREFIXES = ("un", "non", "dis", "in", "im", "ir", "il", "mis", "over", "under", "re",
                 "anti", "super", "semi", "pre", "post")  # fmt: skip


def outside_blanks(record: CandidateRecord) -> str | None:
    """The text between an infill prompt's blanks is missing from x̂, or out of order."""
    prompt = record.prompt
    if BLANK not in prompt or prompt.strip() == BLANK:
        return None
    text = _squeezed(record.text)
    position = 0
    for part in prompt.split(BLANK):
        part = _squeezed(part)
        if not part:
            continue
        found = text.find(part, position)
        if found < 0:
            return OUTSIDE_BLANKS
        position = found + len(part)
    return None


def near_copy(x: Doc, x_hat: Doc) -> str | None:
    """x̂ differs from x only in case, punctuation or whitespace."""
    return NEAR_COPY if _doc_letters(x) == _doc_letters(x_hat) else None


def truncated(x: Doc, x_hat: Doc) -> str | None:
    """x̂ stops mid-sentence where x did not."""
    if FINAL_PUNCTUATION.search(x.text.strip()) and not FINAL_PUNCTUATION.search(
        x_hat.text.strip()
    ):
        return TRUNCATED
    x_words, x_hat_words = _words(x), _words(x_hat)
    if x_hat_words and x_hat_words[-1] in DANGLING_WORDS and x_words[-1:] != x_hat_words[-1:]:
        return TRUNCATED
    if (
        0 < len(x_hat_words) <= TRUNCATED_FRACTION * len(x_words)
        and x_words[: len(x_hat_words)] == x_hat_words
        and not FINAL_PUNCTUATION.search(x_hat.text.strip())
    ):
        return TRUNCATED
    return None


def run_on(x: Doc, x_hat: Doc) -> str | None:
    """x̂ is far longer than x, or goes on past a sentence end where x did not."""
    if len(_words(x_hat)) > RUN_ON_FACTOR * len(_words(x)) + RUN_ON_SLACK:
        return RUN_ON
    if _inner_sentence_ends(x_hat) > _inner_sentence_ends(x):
        return RUN_ON
    return None


def repeated_ngram(x: Doc, x_hat: Doc) -> str | None:
    """x̂ repeats itself (a trigram twice, a word thrice in a row, "the the"); x does not."""
    repeats = _repeats(x_hat) - _repeats(x)
    return REPEATED_NGRAM if repeats else None


def non_word(x: Doc, x_hat: Doc) -> str | None:
    """x̂ has a lower-case alphabetic word that no word list knows and x does not have."""
    words = word_list()
    if not words:
        return None
    known = set(_words(x))
    for token in x_hat:
        if not token.is_alpha or token.text[0].isupper():
            continue
        lower = token.lower_
        if lower in known or lower in words or token.lemma_.lower() in words:
            continue
        if token.pos_ == "INTJ" or _prefixed_word(lower, words):
            continue
        return NON_WORD
    return None


def fragment(x: Doc, x_hat: Doc) -> str | None:
    """x is headed by a verb and x̂ has none: x̂ is no longer a clause."""
    if _verb_rooted(x) and not _has_verb(x_hat):
        return FRAGMENT
    return None


PAIR_FILTERS = (near_copy, truncated, run_on, repeated_ngram, non_word, fragment)


def pair_sanity_reason(x: Doc, x_hat: Doc, edit: Edit | None = None) -> str | None:
    """The first filter in `REASONS` order that x̂ fails, of those that read only the two
    parses (every one but `outside_blanks`, which reads the record's prompt)."""
    del edit  # the filters compare whole texts; the edit is for filters to come
    for check in PAIR_FILTERS:
        reason = check(x, x_hat)
        if reason:
            return reason
    return None


def sanity_reason(
    original_doc: Doc, candidate_doc: Doc, edit: Edit | None, record: CandidateRecord
) -> str | None:
    """The first of `REASONS` that the candidate fails, or None when it passes them all."""
    return outside_blanks(record) or pair_sanity_reason(original_doc, candidate_doc, edit)


# --- Word lists ---------------------------------------------------------------------

WORD_LIST_SOURCES: list[str] = []  # the lists `word_list` loaded, for reports


@functools.cache
def word_list() -> frozenset[str]:
    """Every lower-cased English word the lists installed here know (see the docstring)."""
    from spacy.lang.en.stop_words import STOP_WORDS
    from spacy.lang.en.tokenizer_exceptions import TOKENIZER_EXCEPTIONS
    from spacy.symbols import ORTH

    words: set[str] = set()
    try:
        lexicon = resources.files("lemminflect") / "resources"
        with gzip.open(lexicon / "lemma_lu.csv.gz", "rt", encoding="utf-8") as rows:
            words.update(row[0].lower() for row in csv.reader(rows) if row)
        with gzip.open(lexicon / "infl_lu.csv.gz", "rt", encoding="utf-8") as rows:
            for row in csv.reader(rows):
                if len(row) >= 3:
                    words.add(row[0].lower())
                    words.update(form.lower() for form in row[2].split("/"))
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        return frozenset()  # no lexicon: `non_word` passes everything
    WORD_LIST_SOURCES.append("lemminflect")
    words.update(STOP_WORDS)
    words.update(
        piece[ORTH].lower() for pieces in TOKENIZER_EXCEPTIONS.values() for piece in pieces
    )
    WORD_LIST_SOURCES.append("spacy")
    words.update(_model_strings())
    words.update(HYPHEN_PREFIXES)
    try:
        vader = resources.files("vaderSentiment") / "vader_lexicon.txt"
        with vader.open(encoding="utf-8") as lines:
            words.update(line.split("\t", 1)[0].lower() for line in lines if line.strip())
        WORD_LIST_SOURCES.append("vader")
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        pass
    return frozenset(word for word in words if word.isalpha())


def _model_strings() -> set[str]:
    """The lower-case words of 4+ letters in the spaCy model's string store, read from its
    files: a running pipeline's store also holds every text it has parsed since."""
    try:
        package = resources.files(SPACY_MODEL)
        paths = [path / "vocab" / "strings.json" for path in package.iterdir() if path.is_dir()]
        path = next(path for path in paths if path.is_file())
    except (ModuleNotFoundError, StopIteration, OSError):
        return set()
    strings = json.loads(path.read_text(encoding="utf-8"))
    WORD_LIST_SOURCES.append(SPACY_MODEL)
    return {
        word
        for word in strings
        if len(word) >= MODEL_WORD_MIN and word.isalpha() and word.islower()
    }


# --- Helpers ------------------------------------------------------------------------


def _squeezed(text: str) -> str:
    return " ".join(text.lower().split())


def _letters(text: str) -> str:
    return "".join(char for char in text.lower() if char.isalnum())


# Facts of one parse that several filters, and every candidate of an original, ask for:
# computed once per Doc (generation.parsing.per_doc).
@per_doc
def _doc_letters(doc: Doc) -> str:
    return _letters(doc.text)


@per_doc
def _words(doc: Doc) -> tuple[str, ...]:
    return tuple(token.lower_ for token in doc if is_word(token))


def _inner_sentence_ends(doc: Doc) -> int:
    """Sentence-final punctuation followed by a word: where one sentence ends and another
    begins (counted on punctuation, not on the parser's sentence guesses)."""
    ends = 0
    for token in doc[:-1]:
        if token.text in SENTENCE_END and any(is_word(t) for t in doc[token.i + 1 :]):
            ends += 1
    return ends


def _repeats(doc: Doc) -> set[tuple[str, ...]]:
    """Every repeat in `doc`, as the n-gram repeated (so x's own repeats can be removed)."""
    words = [token for token in doc if is_word(token)]
    lower = [token.lower_ for token in words]
    found: set[tuple[str, ...]] = set()
    seen: set[tuple[str, ...]] = set()
    for i in range(len(lower)):
        gram = tuple(lower[i : i + REPEATED_ANYWHERE])
        if len(gram) == REPEATED_ANYWHERE:
            if gram in seen:
                found.add(gram)
            seen.add(gram)
        if lower[i : i + WORD_RUN] == [lower[i]] * WORD_RUN:
            found.add((lower[i],) * WORD_RUN)
        for n in range(2, REPEATED_ANYWHERE):
            if i + 2 * n <= len(lower) and lower[i : i + n] == lower[i + n : i + 2 * n]:
                found.add(tuple(lower[i : i + 2 * n]))
    for first, second in itertools.pairwise(words):
        if _doubled_function_word(first, second):
            found.add((first.lower_, second.lower_))
    return found


def _doubled_function_word(first: Token, second: Token) -> bool:
    return (
        first.lower_ == second.lower_
        and first.pos_ in NO_DOUBLE_POS
        and first.lower_ not in NO_DOUBLE_EXCEPT
        and second.i == first.i + 1
    )


def _prefixed_word(word: str, words: frozenset[str]) -> bool:
    """A known word behind a productive prefix ("unfunny", "overacted"): counterfactual
    edits make these, and no word list has them all."""
    return any(
        word.startswith(prefix) and len(word) - len(prefix) >= 3 and word[len(prefix) :] in words
        for prefix in WORD_PREFIXES
    )


def _verb_rooted(doc: Doc) -> bool:
    return any(sentence.root.pos_ in VERB_POS for sentence in doc.sents)


def _has_verb(doc: Doc) -> bool:
    return any(token.pos_ in VERB_POS for token in doc)
