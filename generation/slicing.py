"""Slicing functions: find originals with a pattern and the token spans to blank (Polyjuice §4.1).

Polyjuice adjusts Chen et al. (2019)'s slicing functions to pick the x that show a
pattern of interest, then blanks exactly that pattern so the generator changes it:
"[resemantic] His surfboard is [BLANK] him." Each slicing function reads a spaCy
parse and returns token spans [start, end); an empty list means no match. §4.4 uses
the slices to aim augmentation where models fail (prepositions for NLI, entity
order for QQP).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from spacy.tokens import Doc, Token

from generation.parsing import ParseCache
from generation.polyjuice import PerturbTarget
from generation.records import OriginalRecord
from generation.tokens import CONTROL_CODES, LEXICAL, NEGATION, QUANTIFIER, RESEMANTIC, SHUFFLE

Span = tuple[int, int]
FindSpans = Callable[[Doc], list[Span]]


@dataclass(frozen=True)
class SliceFunction:
    name: str
    description: str  # one line, shown to researchers choosing slices
    code: str  # the control code that suits a change of this pattern
    find: FindSpans

    def __call__(self, doc: Doc) -> list[Span]:
        return _tidy(doc, self.find(doc))


SLICES: dict[str, SliceFunction] = {}


def slicing_function(name: str, description: str, *, code: str) -> Callable[[FindSpans], FindSpans]:
    """Register `(doc) -> spans` under `name`; the function itself is returned unchanged."""
    if code not in CONTROL_CODES:
        raise ValueError(f"Unknown control code {code!r}; choose from {', '.join(CONTROL_CODES)}.")

    def register(find: FindSpans) -> FindSpans:
        if name in SLICES:
            raise ValueError(f"A slicing function named {name!r} is already registered.")
        SLICES[name] = SliceFunction(name, description, code, find)
        return find

    return register


def slice_names() -> list[str]:
    return list(SLICES)


def get_slice(name: str) -> SliceFunction:
    try:
        return SLICES[name]
    except KeyError:
        raise ValueError(
            f"Unknown slicing function {name!r}; choose from {', '.join(SLICES)}."
        ) from None


# Punctuation that sits inside one written word ("e-mail", "5%", "and/or").
_WORD_INTERNAL_PUNCT = frozenset({"-", "%", "/"})


def _joinable(token: Token) -> bool:
    return not token.is_punct or token.text in _WORD_INTERNAL_PUNCT


def _glued(left: Token, right: Token) -> bool:
    return not left.whitespace_ and _joinable(left) and _joinable(right)


def _is_apostrophe_clitic(token: Token) -> bool:
    # "'s", "'ll", "'re": a span of "John" or "we" keeps its clitic outside the blank.
    return token.text[:1] in ("'", "\u2019") and len(token.text) > 1


def _tidy(doc: Doc, spans: list[Span]) -> list[Span]:
    """Clip, widen to whole written words, sort, and merge spans that overlap.

    Blanking half a word reads badly ("I did[BLANK] go"), so a span grows over a
    contraction or hyphenation ("didn't", "can't", "$5"). A span stops before "'s" or
    "'ll" ("[BLANK]'s car"), but a span that starts on one takes its host word ("we'll").
    Touching spans stay apart ("gave him her"): each can be blanked on its own.
    """
    widened: list[Span] = []
    for start, end in spans:
        start, end = max(0, start), min(len(doc), end)
        if start >= end:
            continue
        while start > 0 and _glued(doc[start - 1], doc[start]):
            start -= 1
        while (
            end < len(doc)
            and _glued(doc[end - 1], doc[end])
            and not _is_apostrophe_clitic(doc[end])
        ):
            end += 1
        widened.append((start, end))
    return _merge(widened, touching=False)


def _merge(spans: list[Span], *, touching: bool) -> list[Span]:
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and (start < merged[-1][1] or (touching and start == merged[-1][1])):
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _token_spans(tokens: Sequence[Token]) -> list[Span]:
    return [(token.i, token.i + 1) for token in tokens]


def _with_left_modifiers(token: Token, deps: frozenset[str]) -> Span:
    """The token plus the modifiers directly before it ("very good", "more careful")."""
    start = token.i
    for child in sorted(token.lefts, key=lambda left: -left.i):
        if child.i == start - 1 and child.dep_ in deps:
            start = child.i
    return (start, token.i + 1)


def _standalone(token: Token) -> bool:
    # "of" in "state-of-the-art" is a preposition inside a word, not one to change.
    doc = token.doc
    glued_before = token.i > 0 and _glued(doc[token.i - 1], token)
    glued_after = token.i + 1 < len(doc) and _glued(token, doc[token.i + 1])
    return not (glued_before or glued_after)


@slicing_function("preposition", "Has a preposition (beneath, on, with, ...)", code=RESEMANTIC)
def preposition(doc: Doc) -> list[Span]:
    # Touching prepositions are one relation: "out of", "because of".
    spans = _token_spans(
        [
            token
            for token in doc
            if token.is_alpha
            and (token.dep_ in ("prep", "agent") or (token.pos_ == "ADP" and token.tag_ == "IN"))
            and token.dep_ not in ("mark", "quantmod")  # "if"/"than 20" are not relations
            and _standalone(token)
        ]
    )
    return _merge(spans, touching=True)


QUANTIFIER_WORDS = frozenset(
    {"all", "any", "both", "each", "enough", "every", "few", "half", "many", "most", "much"}
    | {"no", "none", "several", "some"}
)
_NUMBER_MODIFIER_DEPS = frozenset({"quantmod", "advmod", "amod", "compound", "nmod", "nummod"})


def _is_number(token: Token) -> bool:
    if not (token.tag_ == "CD" or token.like_num):
        return False
    # "the boring one" uses "one" as a pronoun, not a count.
    return token.lower_ != "one" or token.dep_ in ("nummod", "quantmod", "compound")


@slicing_function(
    "quantifier_or_number",
    "Has a number or a quantifier (all, some, few, three, ...)",
    code=QUANTIFIER,
)
def quantifier_or_number(doc: Doc) -> list[Span]:
    spans: list[Span] = []
    for token in doc:
        if _is_number(token):
            # "more than 20", "about five hundred": the count and what qualifies it.
            modifiers = [child.i for child in token.children if child.dep_ in _NUMBER_MODIFIER_DEPS]
            spans.append((min([token.i, *modifiers]), max([token.i, *modifiers]) + 1))
        elif token.lower_ in QUANTIFIER_WORDS and token.pos_ in ("DET", "PRON", "ADJ", "NUM"):
            spans.append((token.i, token.i + 1))
    return _merge(spans, touching=True)  # "all five" is one quantity


NEGATION_WORDS = frozenset(
    {"not", "n't", "never", "no", "nothing", "nobody", "none", "nor", "neither", "nowhere"}
    | {"without", "cannot"}
)


@slicing_function("negation", "Has a negation (not, never, nobody, without, ...)", code=NEGATION)
def negation(doc: Doc) -> list[Span]:
    return _token_spans(
        [
            token
            for token in doc
            if token.dep_ == "neg" or token.lower_.replace("\u2019", "'") in NEGATION_WORDS
        ]
    )


_DEGREE_HEADS = ("ADJ", "ADV")


def _degree_spans(doc: Doc, tags: tuple[str, ...], *, skip_quantifiers: bool) -> list[Span]:
    spans: list[Span] = []
    for token in doc:
        if token.tag_ not in tags:
            continue
        if skip_quantifiers and token.lower_ in ("most", "least") and token.dep_ != "advmod":
            continue  # "most people" quantifies; "the most boring" compares
        head = token.head
        if token.lower_ in ("more", "most", "less", "least") and head.pos_ in _DEGREE_HEADS:
            # The degree word alone would leave "careful" to be re-used unchanged.
            spans.append((min(token.i, head.i), max(token.i, head.i) + 1))
        else:
            spans.append((token.i, token.i + 1))
    return spans


@slicing_function(
    "comparative", "Has a comparative (taller, more careful, less than)", code=LEXICAL
)
def comparative(doc: Doc) -> list[Span]:
    return _degree_spans(doc, ("JJR", "RBR"), skip_quantifiers=False)


@slicing_function("superlative", "Has a superlative (best, most boring)", code=LEXICAL)
def superlative(doc: Doc) -> list[Span]:
    return _degree_spans(doc, ("JJS", "RBS"), skip_quantifiers=True)


# Numeric and temporal entity labels belong to the number and temporal slices.
NAMED_ENTITY_LABELS = frozenset(
    {"PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW"}
    | {"LANGUAGE"}
)


@slicing_function(
    "named_entity", "Mentions a named entity (person, place, organisation)", code=LEXICAL
)
def named_entity(doc: Doc) -> list[Span]:
    return [(ent.start, ent.end) for ent in doc.ents if ent.label_ in NAMED_ENTITY_LABELS]


@slicing_function("modal_verb", "Has a modal verb (can, might, should, ...)", code=LEXICAL)
def modal_verb(doc: Doc) -> list[Span]:
    return _token_spans([token for token in doc if token.tag_ == "MD"])


@slicing_function("pronoun", "Has a personal or possessive pronoun (she, him, their)", code=LEXICAL)
def pronoun(doc: Doc) -> list[Span]:
    return _token_spans([token for token in doc if token.tag_ in ("PRP", "PRP$")])


TEMPORAL_ADVERBS = frozenset(
    {"now", "then", "soon", "later", "already", "yet", "still", "recently", "lately", "today"}
    | {"tomorrow", "yesterday", "tonight", "often", "sometimes", "always", "usually", "ago"}
    | {"once", "early", "late", "currently", "previously", "eventually", "afterwards"}
)
TEMPORAL_CONNECTIVES = frozenset({"before", "after", "until", "till", "during", "while"})


@slicing_function(
    "temporal", "Has a time expression (yesterday, at noon, before, soon)", code=RESEMANTIC
)
def temporal(doc: Doc) -> list[Span]:
    spans = [(ent.start, ent.end) for ent in doc.ents if ent.label_ in ("DATE", "TIME")]
    for token in doc:
        is_adverb = token.lower_ in TEMPORAL_ADVERBS and token.dep_ in ("advmod", "npadvmod")
        is_connective = token.lower_ in TEMPORAL_CONNECTIVES and token.dep_ in ("mark", "prep")
        if is_adverb or is_connective:
            spans.append((token.i, token.i + 1))
    return spans


CONDITIONAL_MARKERS = frozenset({"if", "unless", "when", "whenever", "once", "provided"})


@slicing_function("conditional", "Has a condition clause (if, unless, when)", code=RESEMANTIC)
def conditional(doc: Doc) -> list[Span]:
    # Only markers of an adverbial clause: "I wonder if" and "When did you go?" are not conditions.
    return _token_spans(
        [
            token
            for token in doc
            if token.lower_ in CONDITIONAL_MARKERS
            and token.dep_ in ("mark", "advmod")
            and token.head.dep_ == "advcl"
        ]
    )


@slicing_function("adjective", "Has a descriptive adjective (good, red, boring)", code=LEXICAL)
def adjective(doc: Doc) -> list[Span]:
    return [
        _with_left_modifiers(token, frozenset({"advmod"}))  # keep "very" with "good"
        for token in doc
        if token.tag_ == "JJ" and token.pos_ == "ADJ" and token.lower_ not in QUANTIFIER_WORDS
    ]


_SUBJECT_DEPS = ("nsubj", "nsubjpass")
_OBJECT_DEPS = ("dobj", "dative", "attr", "oprd")


def _argument_span(token: Token, chunks: dict[int, Span]) -> Span:
    return chunks.get(token.i, (token.i, token.i + 1))


def _first_object(verb: Token) -> Token | None:
    """The direct object, else the object of the first preposition on the verb or its acomp."""
    direct = [child for child in verb.children if child.dep_ in _OBJECT_DEPS]
    if direct:
        return direct[0]
    holders = [verb, *(child for child in verb.children if child.dep_ == "acomp")]
    for holder in holders:
        for prep in holder.children:
            if prep.dep_ in ("prep", "agent"):
                objects = [child for child in prep.children if child.dep_ == "pobj"]
                if objects:
                    return objects[0]
    return None


@slicing_function(
    "subject_object",
    "Has a subject and an object around one verb, for entity-order shuffles",
    code=SHUFFLE,
)
def subject_object(doc: Doc) -> list[Span]:
    chunks = {chunk.root.i: (chunk.start, chunk.end) for chunk in doc.noun_chunks}
    spans: list[Span] = []
    for subject in doc:
        if subject.dep_ not in _SUBJECT_DEPS or subject.tag_ in ("WP", "WDT", "EX"):
            continue
        obj = _first_object(subject.head)
        if obj is None or obj.tag_ in ("WP", "WDT", "EX") or obj.ent_type_ in ("DATE", "TIME"):
            continue  # "we met at noon": a time is no entity to swap with the subject
        spans += [_argument_span(subject, chunks), _argument_span(obj, chunks)]
    return spans


def tag_slices(docs: Sequence[Doc], names: Sequence[str] | None = None) -> list[list[str]]:
    """The names of the slices each doc matches, in registry order."""
    slices = [get_slice(name) for name in names] if names is not None else list(SLICES.values())
    return [[slice_.name for slice_ in slices if slice_(doc)] for doc in docs]


def targets_for_slices(
    originals: Sequence[OriginalRecord],
    parses: ParseCache,
    names: Sequence[str],
    code: str | None = None,
) -> list[PerturbTarget]:
    """One target per original that matches any named slice, blanking what matched.

    `spans` is the set union of every matched slice's spans (sorted; overlaps kept,
    since `targeted_blank_sets` tries each span alone before blanking them together).
    Without `code`, each target asks for the suggested codes of the slices it matched.
    """
    if not names:
        raise ValueError(f"Name at least one slicing function from {', '.join(SLICES)}.")
    if code is not None and code not in CONTROL_CODES:
        raise ValueError(f"Unknown control code {code!r}; choose from {', '.join(CONTROL_CODES)}.")
    slices = [get_slice(name) for name in dict.fromkeys(names)]
    docs = parses.parse_many(original.text for original in originals)
    targets: list[PerturbTarget] = []
    for original, doc in zip(originals, docs, strict=True):
        matched = [(slice_, slice_(doc)) for slice_ in slices]
        matched = [(slice_, spans) for slice_, spans in matched if spans]
        if not matched:
            continue
        spans = sorted({span for _, slice_spans in matched for span in slice_spans})
        codes = (code,) if code else tuple(dict.fromkeys(slice_.code for slice_, _ in matched))
        targets.append(PerturbTarget(original=original, spans=tuple(spans), codes=codes))
    return targets
