"""Rule-based causal counterfactuals: NEGATION (causal -> no relationship) and STRENGTHEN
(conditional causal -> causal), after the causal-counterfactuals paper (seed 002).

Both work on the spaCy parse of the original, with Penn Treebank tags (`token.tag_`),
and never raise on bad input: an original they cannot edit comes back in `skipped`
with the reason. See causal_rules.md beside this file for the paper-to-code map and
every place where we chose differently from the paper or its released code.

- NEGATION (§3.2.1, Algorithm 1): find the root word, move from a copula to its
  acomp/attr, apply the first matching of the 12 templates (VB_1.1 ... IN_1.1), at most
  `max_tries` rule applications (a noun target hands over to its head).
- EDIT-ALT (§3.2.1): replace the negated word by a WordNet antonym (`wordnet.py`) put
  back in the original's tense, kept only when the edit distance between the two words
  is at most 30% of the longer one (rounded half up); otherwise the plain EDIT is the
  REGULAR form.
- STRENGTHEN (§3.2.2, Algorithm 2): {could, should, would} -> would, {can, may, might,
  will} -> will; modal+be -> was (were after a plural subject), modal+have -> had,
  modal+have+be -> was/were, modal+hedging adverb -> modal without the adverb.
- SHORTEN and MULTIPLES (§3.4): the dependency path from the edit to the root plus the
  root's children; and the edit's three-word phrase repeated len(x)/3 times.
"""

from __future__ import annotations

import abc
import functools
import logging
import math
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from spacy.tokens import Doc, Token

from generation.edits import levenshtein
from generation.generators.base import (
    DEFAULT_MAX_TOKENS,
    GenerationContext,
    GeneratorOutput,
    Skipped,
    candidate,
    input_problem,
)
from generation.generators.wordnet import (
    WORDNET_POS,
    WordNet,
    WordNetMissing,
    default_wordnet,
)
from generation.records import OriginalRecord

logger = logging.getLogger(__name__)

REGULAR, SHORTEN, MULTIPLES = "regular", "shorten", "multiples"
VARIANTS = (REGULAR, SHORTEN, MULTIPLES)
EDIT, EDIT_ALT = "edit", "edit-alt"

# Label values of the "causal strength" task template (cfannotate.campaigns.task_templates),
# the four CSci levels of the paper's §3.1: c0 no relationship, c1 causal, c2 conditional.
NO_RELATIONSHIP = "no_relationship"
CAUSAL = "causal"
CONDITIONAL_CAUSAL = "conditional_causal"

# Algorithm 1's "AuxilliaryType", as the released code defines it: these lemmas or a modal.
AUXILIARY_LEMMAS = frozenset({"be", "to", "have", "get", "do"})
# Two-letter tag prefixes, as the released code compares them (PR covers PRP and PRP$).
DETERMINER_TAGS = ("CD", "DT")  # VB_1.2
NOUN_PHRASE_TAGS = ("JJ", "NN", "PR", "WP", "WD", "DT")  # VB_1.3: a noun or its description
SUBJECT_TAGS = ("NN", "PR", "WP", "WD", "DT")  # VB_3.1: the word before is noun-like
POSITIVE_CONJUNCTIONS = frozenset({"and", "or"})  # JJ_1.2

# Algorithm 2's ModalDict (§3.2.2).
MODAL_MAP = {
    "could": "would",
    "should": "would",
    "would": "would",
    "can": "will",
    "may": "will",
    "might": "will",
    "will": "will",
}
NEGATING_ADVERBS = frozenset({"not", "n't", "never"})
PLURAL_PRONOUNS = frozenset({"we", "they", "you", "these", "those", "both"})
# Adverbs that only hedge the modal's claim ("can possibly improve"); STRENGTHEN drops
# them. Any other adverb ("may also reduce") says something else and stays.
HEDGING_ADVERBS = frozenset(
    {
        "possibly", "potentially", "perhaps", "probably", "likely", "maybe", "conceivably",
        "plausibly", "presumably", "theoretically", "hypothetically", "feasibly", "arguably",
    }
)  # fmt: skip
# Adjectives that head a complex preposition ("due to"): "undue to" is no antonym.
PREPOSITIONAL_ADJECTIVES = frozenset({"due", "prior", "subsequent", "contrary", "according"})

PHRASE_LENGTH = 3  # MULTIPLES: one word before and after the edit (§3.4)

# Private-use characters that mark edited words while a rewrite is rendered.
_OPEN, _CLOSE = "\ue000", "\ue001"
_WHITESPACE = re.compile(r"\s+")
_EDGE_PUNCTUATION = string.punctuation + "\u201c\u201d\u2018\u2019\u00ab\u00bb"  # curly quotes


def round_half_up(value: float) -> int:
    """'Rounded to the nearest integer' as the paper says, not Python's banker's rounding."""
    return math.floor(value + 0.5)


# --------------------------------------------------------------------------- tense


def inflect(lemma: str, tag: str) -> str | None:
    """`lemma` in the form of Penn tag `tag` (LemmInflect), or None when it has none."""
    # The lemma itself; VBP is the base form of every verb but "be", which never gets
    # an antonym (auxiliaries are left alone), and LemmInflect has no VBP for new words.
    if tag in ("VB", "VBP", "JJ", "RB", "NN"):
        return lemma
    from lemminflect import getInflection

    forms = getInflection(lemma, tag=tag)
    return forms[0] if forms else None


# --------------------------------------------------------------------------- rewrites


@dataclass
class Rewrite:
    """Token-level changes to a parsed sentence: replaced words, words inserted around tokens.

    Inserted words and replacements are the edit's focus (for SHORTEN and MULTIPLES),
    except replacements listed in `quiet`: lemmatization or a case change, which the
    paper's tables do not count as interventions either. An empty replacement deletes
    the token.
    """

    method: str
    target: Token  # the word the template is anchored on (Algorithm 1's curr_word)
    words: dict[int, str] = field(default_factory=dict)
    before: dict[int, str] = field(default_factory=dict)
    after: dict[int, str] = field(default_factory=dict)
    quiet: frozenset[int] = frozenset()
    antonyms: tuple[dict, ...] = ()

    def render(self, doc: Doc) -> tuple[str, list[tuple[int, int]]]:
        """The new text, whitespace runs collapsed as the paper does, and the edited spans."""
        parts = []
        for token in doc:
            if token.is_space:
                parts.append(" ")
                continue
            if token.i in self.before:
                parts.append(f"{_OPEN}{self.before[token.i]}{_CLOSE} ")
            if token.i in self.words:
                word = self.words[token.i]
                quiet = token.i in self.quiet or not word
                parts.append(word if quiet else f"{_OPEN}{word}{_CLOSE}")
            else:
                parts.append(token.text)
            if token.i in self.after:
                parts.append(f" {_OPEN}{self.after[token.i]}{_CLOSE}")
            parts.append(token.whitespace_)
        marked = _WHITESPACE.sub(" ", "".join(parts)).strip()
        text, spans, start = [], [], None
        for character in marked:
            if character == _OPEN:
                start = len(text)
            elif character == _CLOSE:
                spans.append((start, len(text)))
            else:
                text.append(character)
        return "".join(text), spans


def _words(tokens: Sequence[Token]) -> list[Token]:
    return [token for token in tokens if not (token.is_punct or token.is_space)]


def _neighbours(token: Token) -> tuple[Token | None, Token | None]:
    """The nearest words before and after `token` in its sentence (punctuation skipped),
    as the paper's whitespace tokens see them: "NAFLD." is the sentence's last word."""
    words = _words(token.sent)
    previous = next((word for word in reversed(words) if word.i < token.i), None)
    following = next((word for word in words if word.i > token.i), None)
    return previous, following


def _is_auxiliary(token: Token) -> bool:
    return token.lemma_.lower() in AUXILIARY_LEMMAS or token.tag_ == "MD"


# --------------------------------------------------------------------------- NEGATION


@dataclass(frozen=True)
class NegationSettings:
    """Options of causal-negation; every field can be set from a campaign or the CLI.

    source_labels: originals with one of these labels are negated (the paper: causal,
    c1); originals with another label are skipped, unlabeled ones are negated.
    Empty: negate whatever the label. target_label: the candidates' intended label
    (the paper: no relationship, c0); empty for none.
    """

    source_labels: tuple[str, ...] = (CAUSAL,)
    target_label: str = NO_RELATIONSHIP
    variants: tuple[str, ...] = (REGULAR,)
    alternative: str = "prefer"  # EDIT-ALT: "prefer" (the paper), "never", "both"
    antonym_scope: str = "lemma"  # "lemma" (direct antonyms) or "synset" (the paper's code)
    max_alt_distance: float = 0.3  # of the longer word's length, rounded half up
    # Which words may take an antonym. Adjectives only by default: a verb's antonym
    # reverses the effect ("increased" -> "decreased") and stays causal; the paper
    # uses every part of speech (add "verb" and "adv" to reproduce it).
    alt_parts_of_speech: tuple[str, ...] = ("adj",)
    max_tries: int = 2
    tense_do_support: bool = False  # VB_3.1: do/does/did by tense instead of always "did"
    max_tokens: int = DEFAULT_MAX_TOKENS

    def __post_init__(self) -> None:
        _check_variants(self.variants)
        if self.alternative not in ("prefer", "never", "both"):
            raise ValueError("alternative must be one of: prefer, never, both")
        if self.antonym_scope not in ("lemma", "synset"):
            raise ValueError("antonym_scope must be one of: lemma, synset")
        if not set(self.alt_parts_of_speech) <= {"adj", "verb", "adv"}:
            raise ValueError("alt_parts_of_speech must be a list of: adj, verb, adv")
        if not 0 <= self.max_alt_distance <= 1:
            raise ValueError("max_alt_distance must be between 0 and 1")
        if self.max_tries < 1 or self.max_tokens < 1:
            raise ValueError("max_tries and max_tokens must be at least 1")


def _check_variants(variants: tuple[str, ...]) -> None:
    unknown = [variant for variant in variants if variant not in VARIANTS]
    if unknown or not variants:
        raise ValueError(f"variants must be a non-empty list of: {', '.join(VARIANTS)}")


class NoTemplate(Exception):
    """No negation or strengthening template matched; the message says where."""


def negation_target(root: Token) -> Token:
    """The word to negate for a root: a be/have/do/get root or a modal hands over to its
    adjectival complement or attribute, as the released code does (\"TyG is effective\")."""
    if _is_auxiliary(root):
        for child in root.children:
            if child.dep_ in ("acomp", "attr"):
                return child
    return root


def negation_rules(token: Token, settings: NegationSettings, attempt: int = 1) -> Rewrite:
    """Algorithm 1 on one target word: the first matching template, or NoTemplate."""
    if attempt > settings.max_tries:
        raise NoTemplate(f"no template matched within {settings.max_tries} tries")
    tag = token.tag_
    previous, following = _neighbours(token)
    rewrite = functools.partial(Rewrite, target=token)
    if tag.startswith("VB"):
        if _is_auxiliary(token):
            if following is None:
                return rewrite("VB_1.1", before={token.i: "not"})
            if following.tag_[:2] in DETERMINER_TAGS:
                return rewrite("VB_1.2", words={following.i: "no"})
            if following.tag_[:2] in NOUN_PHRASE_TAGS:
                return rewrite("VB_1.3", after={_chain_start(token).i: "not"})
            if following.tag_.startswith("VB"):
                return rewrite("VB_1.4", after={token.i: "no"})
            if following.tag_ in ("IN", "TO"):
                # Not in the paper: "may be at higher risk" -> "may not be at higher risk".
                return rewrite("VB_1.5", after={_chain_start(token).i: "not"})
            raise NoTemplate(
                f"no template for the auxiliary {token.text!r} followed by {following.text!r}"
            )
        if previous is None:
            lowered = {token.i: token.text.lower()}
            return rewrite(
                "VB_2.1", before={token.i: "Not"}, words=lowered, quiet=frozenset(lowered)
            )
        if previous.tag_[:2] in SUBJECT_TAGS:
            support = _do_support(token) if settings.tense_do_support else "did"
            lemma = {token.i: token.lemma_.lower()}
            return rewrite(
                "VB_3.1", before={token.i: f"{support} not"}, words=lemma, quiet=frozenset(lemma)
            )
        if following is None:
            return rewrite("VB_4.1", before={token.i: "not"})
        if _is_auxiliary(previous):
            # "had driven" -> "had not driven"; with a chain of auxiliaries the negator
            # goes after the first one: "could be involved" -> "could not be involved".
            return rewrite("VB_5.1", after={_first_auxiliary(token, previous).i: "not"})
        if following.tag_ in ("IN", "TO"):
            return rewrite("VB_5.1", before={token.i: "not"})
        raise NoTemplate(f"no template for the verb {token.text!r}")
    if tag.startswith("NN"):
        if token.head.i == token.i:
            raise NoTemplate(f"the noun {token.text!r} has no head to negate")
        return negation_rules(token.head, settings, attempt + 1)
    if tag.startswith("JJ"):
        negator = _adjective_negator(token, previous)
        if following is None:
            return rewrite("JJ_1.1", **negator)
        if following.lower_ in POSITIVE_CONJUNCTIONS:
            return rewrite("JJ_1.2", **negator, words={following.i: "nor"})
        return rewrite("JJ_1.3", **negator)
    if tag == "IN":
        return rewrite("IN_1.1", before={token.i: "not"})
    raise NoTemplate(f"no template for {token.text!r} ({tag})")


def _first_auxiliary(verb: Token, previous: Token) -> Token:
    """The first of the auxiliaries that stand right before `verb` (`previous` is the last),
    looking past adverbs among them: "could possibly be linked" starts at "could"."""
    auxiliaries = {
        child.i
        for child in verb.children
        if child.dep_ in ("aux", "auxpass") and child.lower_ != "to"
    }
    adverbs = {child.i for child in verb.children if child.dep_ == "advmod"}
    if previous.i not in auxiliaries:
        return previous
    first, before = previous, _neighbours(previous)[0]
    while before is not None and before.i in auxiliaries | adverbs:
        if before.i in auxiliaries:
            first = before
        before = _neighbours(before)[0]
    return first


def _chain_start(copula: Token) -> Token:
    """Where "not" goes for a be/have root: after the first auxiliary before it ("may be"
    -> "may not be", not "may be not"), else after the word itself."""
    previous, _ = _neighbours(copula)
    if previous is None or not _is_auxiliary(previous):
        return copula
    first = _first_auxiliary(copula, previous)
    return copula if first.lower_ == "to" else first  # "to not be" splits the infinitive


def _adjective_negator(adjective: Token, previous: Token | None) -> dict:
    """ "not" before the adjective, or, right after a copula with auxiliaries, after the
    first of them: "could be effective" -> "could not be effective"."""
    copula = adjective.head
    if (
        previous is not None
        and previous.i == copula.i
        and copula.lemma_.lower() == "be"
        and _chain_start(copula).i != copula.i
    ):
        return {"after": {_chain_start(copula).i: "not"}}
    return {"before": {adjective.i: "not"}}


def _already_negated(*tokens: Token) -> Token | None:
    for token in tokens:
        for child in token.children:
            if child.dep_ == "neg" or (child.dep_ == "det" and child.lower_ == "no"):
                return child
    return None


def _do_support(verb: Token) -> str:
    return {"VBZ": "does", "VBP": "do", "VB": "do"}.get(verb.tag_, "did")


def _wordnet_pos(tag: str) -> str | None:
    return WORDNET_POS.get(tag[:2])


def edit_distance_limit(word: str, antonym: str, ratio: float) -> int:
    """§3.2.1: ratio (30%) of the longer word's length, rounded to the nearest integer."""
    return round_half_up(ratio * max(len(word), len(antonym)))


def within_edit_distance(word: str, antonym: str, ratio: float) -> bool:
    """Whether EDIT-ALT may use `antonym` for `word`: 'able' -> 'unable' yes, 'safe' ->
    'dangerous' no (§3.2.1). Character Levenshtein distance on the lemmas."""
    return levenshtein(word, antonym) <= edit_distance_limit(word, antonym, ratio)


def antonym_for(
    token: Token,
    wordnet: WordNet,
    *,
    scope: str,
    max_distance: float,
    parts_of_speech: Sequence[str] = ("adj", "verb", "adv"),
) -> dict | None:
    """EDIT-ALT for one word: the closest antonym within the edit-distance rule, inflected
    like the word, or None. Auxiliaries and function words never get one."""
    pos = _wordnet_pos(token.tag_)
    if pos not in parts_of_speech or pos == "noun" or _is_auxiliary(token):
        return None
    if token.lower_ in PREPOSITIONAL_ADJECTIVES:
        return None
    lemma = next(
        (form for form in (token.lemma_.lower(), token.lower_) if wordnet.knows(form, pos)), None
    )
    if lemma is None:
        return None
    best = None
    for antonym in wordnet.antonyms(lemma, pos, scope=scope):
        if " " in antonym:
            continue
        distance = levenshtein(lemma, antonym)
        limit = edit_distance_limit(lemma, antonym, max_distance)
        if distance > limit or (best is not None and distance >= best["distance"]):
            continue
        form = inflect(antonym, token.tag_)
        if form is None:
            continue
        if token.text[:1].isupper():
            form = form[:1].upper() + form[1:]
        best = {
            "word": token.text,
            "lemma": lemma,
            "antonym": antonym,
            "form": form,
            "distance": distance,
            "limit": limit,
            "index": token.i,
        }
    return best


def alternative_rewrite(
    edit: Rewrite, wordnet: WordNet, settings: NegationSettings
) -> Rewrite | None:
    """EDIT-ALT of a negation: the same place, the negated word(s) replaced by antonyms.

    JJ_1.2 ("not X nor Y") needs antonyms for both X and the word after the conjunction.
    """
    doc = edit.target.doc
    targets = [edit.target]
    if edit.method == "JJ_1.2":
        conjunction = next(iter(edit.words))
        _, after_conjunction = _neighbours(doc[conjunction])
        if after_conjunction is None:
            return None
        targets.append(after_conjunction)
    found = []
    for token in targets:
        antonym = antonym_for(
            token,
            wordnet,
            scope=settings.antonym_scope,
            max_distance=settings.max_alt_distance,
            parts_of_speech=settings.alt_parts_of_speech,
        )
        if antonym is None:
            return None
        found.append(antonym)
    return Rewrite(
        edit.method,
        edit.target,
        words={antonym["index"]: antonym["form"] for antonym in found},
        antonyms=tuple(found),
    )


# --------------------------------------------------------------------------- STRENGTHEN


@dataclass(frozen=True)
class StrengthenSettings:
    """Options of causal-strengthen. source_labels / target_label as for negation; the
    paper turns conditional causal (c2) into causal (c1)."""

    source_labels: tuple[str, ...] = (CONDITIONAL_CAUSAL,)
    target_label: str = CAUSAL
    variants: tuple[str, ...] = (REGULAR,)
    be_agreement: bool = True  # modal+be -> "were" after a plural subject (the paper: "was")
    max_tokens: int = DEFAULT_MAX_TOKENS

    def __post_init__(self) -> None:
        _check_variants(self.variants)
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")


def _subject(verb: Token) -> Token | None:
    """The word that decides the verb's number: its subject; for "there" the noun after
    the verb ("there may be associations"); for a relative pronoun the noun it stands for
    ("children who could be exposed"); a conjoined verb's first verb's subject."""
    while True:
        subject = next(
            (child for child in verb.children if child.dep_ in ("nsubj", "nsubjpass", "expl")),
            None,
        )
        if subject is not None and subject.dep_ == "expl":
            return next((child for child in verb.children if child.dep_ == "attr"), None)
        if subject is not None and subject.tag_ in ("WDT", "WP") and verb.dep_ == "relcl":
            return verb.head
        if subject is not None or verb.dep_ != "conj" or verb.head.i == verb.i:
            return subject
        verb = verb.head


def _plural_subject(verb: Token) -> bool:
    subject = _subject(verb)
    return subject is not None and (
        subject.tag_ in ("NNS", "NNPS")
        or subject.lower_ in PLURAL_PRONOUNS
        or "Plur" in subject.morph.get("Number")
        or any(child.dep_ == "conj" for child in subject.children)
    )


def _case_like(word: str, model: Token) -> str:
    return word[:1].upper() + word[1:] if model.text[:1].isupper() else word


def _adverbs_after(modal: Token) -> tuple[list[Token], Token | None]:
    """The adverbs right after the modal ("can possibly", "may also") and the word after them."""
    adverbs, following = [], _neighbours(modal)[1]
    while following is not None and following.tag_.startswith("RB"):
        adverbs.append(following)
        following = _neighbours(following)[1]
    return adverbs, following


def strengthen_rules(modal: Token, settings: StrengthenSettings) -> Rewrite:
    """Algorithm 2 on one modal: the first matching template, or NoTemplate.

    Adverbs between the modal and its verb are looked past: a negating one stops the
    rule, a hedging one is dropped (MOD_4.1), any other stays where it is ("may also be
    associated" -> "was also associated").
    """
    adverbs, following = _adverbs_after(modal)
    negator = next(
        (word for word in adverbs if word.lower_ in NEGATING_ADVERBS or word.dep_ == "neg"), None
    )
    if negator is not None:
        raise NoTemplate(
            f"{modal.text!r} is negated by {negator.text!r}: strengthening would drop the negation"
        )
    hedges = {word.i: "" for word in adverbs if word.lower_ in HEDGING_ADVERBS}
    after_following = _neighbours(following)[1] if following is not None else None
    rewrite = functools.partial(Rewrite, target=modal)
    be = "were" if settings.be_agreement and _plural_subject(modal.head) else "was"
    if following is not None and following.lemma_.lower() == "be":
        words = {modal.i: _case_like(be, modal), following.i: ""}
        return rewrite("MOD_2.1", words=words | hedges)
    if following is not None and following.lemma_.lower() == "have":
        if after_following is not None and after_following.lemma_.lower() == "be":
            words = {modal.i: _case_like(be, modal), following.i: "", after_following.i: ""}
            return rewrite("MOD_3.2", words=words | hedges)
        words = {modal.i: _case_like("had", modal), following.i: ""}
        return rewrite("MOD_3.1", words=words | hedges)
    stronger = _case_like(MODAL_MAP[modal.lower_], modal)
    if hedges:
        return rewrite("MOD_4.1", words={modal.i: stronger} | hedges)
    if stronger.lower() == modal.lower_:
        raise NoTemplate(f"{modal.text!r} is already the strong modal")
    return rewrite("MOD_1.1", words={modal.i: stronger})


# --------------------------------------------------------------------------- heuristics


def _phrase_words(text: str) -> list[tuple[int, int]]:
    """Character spans of whitespace-separated words, edge punctuation trimmed."""
    spans = []
    for match in re.finditer(r"\S+", text):
        word = match.group()
        left = len(word) - len(word.lstrip(_EDGE_PUNCTUATION))
        right = len(word.rstrip(_EDGE_PUNCTUATION))
        if right > left:
            spans.append((match.start() + left, match.start() + right))
    return spans


def multiples(text: str, focus: list[tuple[int, int]], original_text: str, *, after: bool) -> str:
    """MULTIPLES (§3.4): the word before the edit, the edit, and (for a plain EDIT) the word
    after it, repeated round(len(x) / 3) times, len(x) counted in words of the original.

    An EDIT-ALT phrase has no word after: "is ineffective" stands for "is not effective"
    (the paper's note under §3.4), so the phrase length stays 3 for every sentence.
    """
    words = _phrase_words(text)
    start, end = focus[0][0], focus[0][1]
    inside = [index for index, (left, right) in enumerate(words) if left < end and right > start]
    if not inside:
        return ""
    first, last = inside[0], inside[-1]
    if first > 0:
        first -= 1
    if after and last + 1 < len(words):
        last += 1
    phrase = " ".join(text[left:right] for left, right in words[first : last + 1])
    times = max(1, round_half_up(len(original_text.split()) / PHRASE_LENGTH))
    return " ".join([phrase] * times)


def shorten(doc: Doc, focus: list[tuple[int, int]]) -> str:
    """SHORTEN (§3.4): every edited word, its heads up to the root, and the root's children
    (punctuation left out), in sentence order; not always a contiguous slice."""
    chosen: set[int] = set()
    for start, end in focus:
        span = doc.char_span(start, end, alignment_mode="expand")
        for token in span or ():
            chosen.add(token.i)
            node = token
            while node.head.i != node.i:
                node = node.head
                chosen.add(node.i)
            chosen.update(child.i for child in node.children)
    kept = sorted(i for i in chosen if not (doc[i].is_punct or doc[i].is_space))
    parts = []
    for position, i in enumerate(kept):
        parts.append(doc[i].text)
        if position + 1 < len(kept):
            parts.append((doc[i].whitespace_ or "") if kept[position + 1] == i + 1 else " ")
    return _WHITESPACE.sub(" ", "".join(parts)).strip()


# --------------------------------------------------------------------------- generators


@dataclass(frozen=True)
class _Form:
    """One REGULAR form of an edit (EDIT or EDIT-ALT) with everything its variants need."""

    kind: str
    rewrite: Rewrite
    text: str
    focus: list[tuple[int, int]]


class _CausalRules(abc.ABC):
    name: ClassVar[str]
    edit_type: ClassVar[str]
    Settings: ClassVar[type]

    def __init__(self, settings=None) -> None:
        self.settings = settings if settings is not None else self.Settings()

    def generate(
        self, originals: Sequence[OriginalRecord], *, context: GenerationContext
    ) -> GeneratorOutput:
        """Candidates for every original it can edit; a reason for every other one."""
        output = GeneratorOutput()
        # 1. Checks that need no parse: the label, and empty, non-English or long text.
        problems = {original.key: self._early_problem(original) for original in originals}
        not_for_label = {
            original.key for original in originals if self._label_problem(original) is not None
        }
        # 2. Parse the rest in one batch (the cache shares the parses with later steps).
        parsed = [original for original in originals if problems[original.key] is None]
        docs = dict(
            zip(
                (original.key for original in parsed),
                context.parses.parse_many([original.text for original in parsed]),
                strict=True,
            )
        )
        # 3. Per original: the parse checks, the rules, then each variant of each form.
        for original in originals:
            records, reason = self._original_candidates(
                original, problems[original.key], docs.get(original.key), context
            )
            output.candidates.extend(records)
            if not records:
                output.skipped.append(
                    Skipped(original.key, reason, not_for_label=original.key in not_for_label)
                )
            context.advance(1)
        return output

    def _original_candidates(
        self,
        original: OriginalRecord,
        problem: str | None,
        doc: Doc | None,
        context: GenerationContext,
    ) -> tuple[list, str]:
        if problem is None:
            problem = input_problem(original.text, doc, max_tokens=self.settings.max_tokens)
        if problem is not None:
            return [], problem
        try:
            records, reason = self._records(original, doc, context)
        except WordNetMissing:
            raise  # an installation problem, not this original's
        except Exception as error:  # a parse no rule foresaw must not end the whole run
            logger.exception("%s failed on original %s", self.name, original.key)
            return [], f"internal error: {type(error).__name__}: {error}"
        return records, reason or "no variant produced a text"

    def _records(self, original: OriginalRecord, doc: Doc, context: GenerationContext):
        forms, reason = self.forms(doc)
        unchanged = _WHITESPACE.sub(" ", doc.text).strip()
        if forms and all(form.text == unchanged for form in forms):
            reason = "the template leaves the text unchanged"
        records = []
        for form in forms:
            if form.text != unchanged:
                records.extend(self._candidates(original, doc, form, context))
        return records, reason

    def _label_problem(self, original: OriginalRecord) -> str | None:
        """Why the original's label is not one this edit converts, or None."""
        sources = self.settings.source_labels
        if sources and original.label and original.label not in sources:
            return (
                f"label {original.label!r} is not one {self.name} converts ({', '.join(sources)})"
            )
        return None

    def _early_problem(self, original: OriginalRecord) -> str | None:
        problem = self._label_problem(original)
        if problem is not None:
            return problem
        problem = input_problem(original.text)
        if problem is None and len(original.text.split()) > self.settings.max_tokens:
            problem = f"text longer than {self.settings.max_tokens} tokens"
        return problem

    @abc.abstractmethod
    def forms(self, doc: Doc) -> tuple[list[_Form], str | None]:
        """The rewrites of one parsed sentence, or no rewrite and the reason why."""

    def _candidates(self, original, doc: Doc, form: _Form, context: GenerationContext):
        texts = []
        for variant in self.settings.variants:
            if variant == REGULAR:
                text = form.text
            elif variant == MULTIPLES:
                text = multiples(form.text, form.focus, doc.text, after=form.kind == EDIT)
            else:
                text = shorten(context.parses.parse(form.text), form.focus)
            if text:
                texts.append((variant, text))
        target = self.settings.target_label or None
        return [
            candidate(
                original,
                text,
                generator=self.name,
                edit_type=self.edit_type,
                intended_label=target,
                method=form.rewrite.method,
                variant=variant,
                form=form.kind,
                target=form.rewrite.target.text,
                **({"antonyms": list(form.rewrite.antonyms)} if form.rewrite.antonyms else {}),
            )
            for variant, text in texts
        ]


def _form(kind: str, rewrite: Rewrite, doc: Doc) -> _Form:
    text, focus = rewrite.render(doc)
    return _Form(kind, rewrite, text, focus)


class CausalNegation(_CausalRules):
    """NEGATION: causal -> no relationship, with EDIT-ALT antonyms where they are close."""

    name = "causal-negation"
    edit_type = "negation"
    Settings = NegationSettings

    def __init__(self, settings: NegationSettings | None = None, *, wordnet: WordNet | None = None):
        super().__init__(settings)
        self._wordnet = wordnet

    @property
    def wordnet(self) -> WordNet:
        if self._wordnet is None:
            self._wordnet = default_wordnet()
        return self._wordnet

    def negations(self, doc: Doc) -> tuple[list[tuple[Rewrite, Rewrite | None]], str | None]:
        """(EDIT, EDIT-ALT or None) for the root of each sentence, and why none if none."""
        found, reasons = [], []
        for sentence in doc.sents:
            root = sentence.root
            if root.pos_ not in ("VERB", "AUX"):
                reasons.append(f"the root {root.text!r} is not a verb")
                continue
            target = negation_target(root)
            negator = _already_negated(root, target)
            if negator is not None:
                reasons.append(f"already negated by {negator.text!r}")
                continue
            try:
                edit = negation_rules(target, self.settings)
            except NoTemplate as error:
                reasons.append(str(error))
                continue
            alternative = None
            if self.settings.alternative != "never":
                alternative = alternative_rewrite(edit, self.wordnet, self.settings)
            found.append((edit, alternative))
        return found, None if found else "; ".join(reasons) or "no sentence to negate"

    def forms(self, doc: Doc) -> tuple[list[_Form], str | None]:
        pairs, reason = self.negations(doc)
        forms = []
        for edit, alternative in pairs:
            if alternative is not None and self.settings.alternative == "both":
                forms += [_form(EDIT, edit, doc), _form(EDIT_ALT, alternative, doc)]
            elif alternative is not None:
                forms.append(_form(EDIT_ALT, alternative, doc))
            else:
                forms.append(_form(EDIT, edit, doc))
        return forms, reason


class CausalStrengthen(_CausalRules):
    """STRENGTHEN: conditional causal -> causal, one candidate per modal it can harden."""

    name = "causal-strengthen"
    edit_type = "strengthen"
    Settings = StrengthenSettings

    def strengthenings(self, doc: Doc) -> tuple[list[Rewrite], str | None]:
        found, reasons = [], []
        for token in doc:
            if token.tag_ != "MD" or token.lower_ not in MODAL_MAP:
                continue
            try:
                found.append(strengthen_rules(token, self.settings))
            except NoTemplate as error:
                reasons.append(str(error))
        if found:
            return found, None
        return found, "; ".join(reasons) or "no modal (could, should, would, can, may, might, will)"

    def forms(self, doc: Doc) -> tuple[list[_Form], str | None]:
        rewrites, reason = self.strengthenings(doc)
        return [_form(EDIT, rewrite, doc) for rewrite in rewrites], reason
