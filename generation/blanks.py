"""Where to put [BLANK]s: token, subtree, insertion-point and whole-sentence blanks from the parse.

Polyjuice (§3.2, Figure 2, §4.1) lets the caller choose where a perturbation happens.
A blank set is one or more non-overlapping token spans of x; a span with
start == end is an insertion point before token `start`. Random blank sets are
drawn per dependency group (subject/object, aux/root, conj/modifier/clause) so the
blanks spread over different parts of the tree; targeted blank sets come from
explicit spans (slicing functions, §4.1).
"""

import random
from dataclasses import dataclass

from spacy.tokens import Doc

from generation.tokens import BLANK

# Dependency labels by group (spaCy's English label scheme).
DEPENDENCY_GROUPS: dict[str, frozenset[str]] = {
    "subject_object": frozenset(
        {
            "nsubj",
            "nsubjpass",
            "csubj",
            "csubjpass",
            "expl",
            "dobj",
            "iobj",
            "pobj",
            "dative",
            "attr",
            "oprd",
            "agent",
        }
    ),
    "aux_root": frozenset({"aux", "auxpass", "ROOT", "neg", "prt"}),
    "conj_modifier_clause": frozenset(
        {
            "conj",
            "cc",
            "preconj",
            "amod",
            "advmod",
            "npadvmod",
            "nummod",
            "quantmod",
            "det",
            "predet",
            "poss",
            "nmod",
            "compound",
            "appos",
            "prep",
            "acomp",
            "xcomp",
            "ccomp",
            "advcl",
            "relcl",
            "acl",
            "pcomp",
            "mark",
        }
    ),
}

SPAN_KINDS = ("token", "subtree", "insertion")
# Which span kinds to draw, as in Polyjuice's random blanks: anywhere, mixed; inside a
# dependency group, mostly whole subtrees.
KIND_WEIGHTS_ANYWHERE = (0.4, 0.35, 0.25)
KIND_WEIGHTS_IN_GROUP = (0.1, 0.7, 0.2)


@dataclass(frozen=True, order=True)
class BlankSpan:
    start: int
    end: int

    @property
    def is_insertion(self) -> bool:
        return self.start == self.end


@dataclass(frozen=True)
class BlankSet:
    spans: tuple[BlankSpan, ...]
    strategy: str  # "random", "group:<name>", "sentence", "targeted"

    @property
    def is_sentence(self) -> bool:
        return self.strategy == "sentence"


def sentence_blank(doc: Doc) -> BlankSet:
    return BlankSet((BlankSpan(0, len(doc)),), "sentence")


def blanked_text(doc: Doc, blank_set: BlankSet) -> str:
    """x with each span replaced by [BLANK], keeping the original spacing around it."""
    pieces: list[str] = []
    cursor = 0  # character offset in doc.text
    for span in sorted(blank_set.spans):
        start_char = doc[span.start].idx if span.start < len(doc) else len(doc.text)
        if span.is_insertion:
            pieces.append(doc.text[cursor:start_char])
            # An inserted phrase sits between words: give it its own spacing.
            needs_space_before = pieces[-1] != "" and not pieces[-1].endswith(" ")
            pieces.append((" " if needs_space_before else "") + BLANK + " ")
            cursor = start_char
            continue
        last = doc[span.end - 1]
        end_char = last.idx + len(last.text)
        pieces.append(doc.text[cursor:start_char])
        pieces.append(BLANK)
        cursor = end_char
    pieces.append(doc.text[cursor:])
    text = "".join(pieces)
    # An insertion before the end of the text leaves "[BLANK] " at the very end.
    return text.rstrip() if text.endswith(BLANK + " ") else text


def _overlaps(span: BlankSpan, chosen: list[BlankSpan]) -> bool:
    # Spans may not touch either: two adjacent blanks read as one to the model.
    return any(span.start <= other.end and other.start <= span.end for other in chosen)


def _insertion_allowed(doc: Doc, index: int) -> bool:
    # Only between words: never inside "did|n't" or before a comma.
    return index == 0 or bool(doc[index - 1].whitespace_)


def _draw_span(doc: Doc, index: int, kind: str) -> BlankSpan | None:
    token = doc[index]
    if kind == "subtree":
        return BlankSpan(token.left_edge.i, token.right_edge.i + 1)
    if kind == "insertion":
        return BlankSpan(index, index) if _insertion_allowed(doc, index) else None
    return BlankSpan(index, index + 1)


def random_blank_set(
    doc: Doc,
    rng: random.Random,
    *,
    group: str | None = None,
    max_spans: int = 3,
    allowed: frozenset[int] | None = None,
) -> BlankSet | None:
    """One random blank set of up to `max_spans` spans, or None if nothing can be blanked."""
    labels = DEPENDENCY_GROUPS[group] if group else None
    candidates = [
        token.i
        for token in doc
        if not token.is_punct
        and not token.is_space
        and (labels is None or token.dep_ in labels)
        and (allowed is None or token.i in allowed)
    ]
    if not candidates:
        return None
    weights = KIND_WEIGHTS_IN_GROUP if group else KIND_WEIGHTS_ANYWHERE
    wanted = rng.randint(1, min(max_spans, len(candidates)))
    chosen: list[BlankSpan] = []
    for _ in range(20 * wanted):  # bounded: dense sentences may not fit `wanted` spans
        if len(chosen) == wanted:
            break
        kind = rng.choices(SPAN_KINDS, weights=weights)[0]
        span = _draw_span(doc, rng.choice(candidates), kind)
        if span is None or span.end - span.start >= len(doc):
            continue  # a whole-sentence blank is its own strategy
        if not _overlaps(span, chosen):
            chosen.append(span)
    if not chosen:
        return None
    return BlankSet(tuple(sorted(chosen)), f"group:{group}" if group else "random")


def random_blank_sets(
    doc: Doc,
    rng: random.Random,
    *,
    count: int = 4,
    groups: tuple[str, ...] = tuple(DEPENDENCY_GROUPS),
    max_spans: int = 3,
    include_sentence: bool = True,
) -> list[BlankSet]:
    """Several distinct blank sets for one sentence: one per group, then unrestricted ones.

    The whole-sentence blank comes first when asked for, then at most `count` others.
    """
    sets: list[BlankSet] = [sentence_blank(doc)] if include_sentence and len(doc) else []
    seen = {blank_set.spans for blank_set in sets}
    plans: list[str | None] = [*groups, None, None, None]
    attempts = 0
    while len(sets) < count + int(include_sentence) and attempts < 4 * (count + len(plans)):
        group = plans[attempts % len(plans)]
        attempts += 1
        blank_set = random_blank_set(doc, rng, group=group, max_spans=max_spans)
        if blank_set is not None and blank_set.spans not in seen:
            seen.add(blank_set.spans)
            sets.append(blank_set)
    return sets


def targeted_blank_sets(doc: Doc, spans: list[tuple[int, int]]) -> list[BlankSet]:
    """Blank exactly the given token spans: each one alone, then all together."""
    valid = sorted(
        {
            BlankSpan(start, end)
            for start, end in spans
            if 0 <= start <= end <= len(doc) and (start < len(doc) or start == end)
        }
    )
    if not valid:
        return []
    sets = [BlankSet((span,), "targeted") for span in valid]
    merged: list[BlankSpan] = []
    for span in valid:
        if not _overlaps(span, merged):
            merged.append(span)
    if len(merged) > 1:
        sets.append(BlankSet(tuple(merged), "targeted"))
    return sets


def count_blanks(blanked: str) -> int:
    return blanked.count(BLANK)
