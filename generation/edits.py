"""Token diff between x and x̂, widened to parse subtrees."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields

from spacy.tokens import Doc, Token

from generation.parsing import per_doc

REPLACE = "replace"
INSERT = "insert"
DELETE = "delete"

# Dependency labels that open a clause: widening to their subtree would blank a
# whole clause for a one-word change, so they are treated like a sentence root.
CLAUSAL_DEPS = frozenset(
    {"ROOT", "ccomp", "xcomp", "advcl", "relcl", "acl", "csubj", "csubjpass", "parataxis"}
)

Bounds = tuple[int, int]  # [start, end) in tokens or characters


@dataclass(frozen=True)
class EditOp:
    """One contiguous change: a diff opcode plus the parse subtrees it affects."""

    kind: str  # "replace" | "insert" | "delete"
    source: Bounds  # token span [start, end) in x
    target: Bounds  # token span [start, end) in x̂
    removed: str  # text of x's tokens in `source` ("" for insert)
    added: str  # text of x̂'s tokens in `target` ("" for delete)
    source_subtree: Bounds  # `source` widened to the affected phrase in x
    target_subtree: Bounds  # `target` widened to the affected phrase in x̂
    source_chars: Bounds  # character span of `source_subtree` in x.text
    target_chars: Bounds  # character span of `target_subtree` in x̂.text
    removed_tokens: tuple[str, ...] = ()  # lower-cased removed words, punctuation excluded
    added_tokens: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """Every field in declaration order, spans as lists (what `asdict` gives, as JSON)."""
        return {name: _jsonable(getattr(self, name)) for name in _EDIT_OP_FIELDS}

    @classmethod
    def from_dict(cls, data: dict) -> EditOp:
        spans = ("source", "target", "source_subtree", "target_subtree")
        chars = ("source_chars", "target_chars")
        values = {key: tuple(data[key]) for key in (*spans, *chars)}
        return cls(
            kind=data["kind"],
            removed=data["removed"],
            added=data["added"],
            removed_tokens=tuple(data.get("removed_tokens", ())),
            added_tokens=tuple(data.get("added_tokens", ())),
            **values,
        )


_EDIT_OP_FIELDS = tuple(field.name for field in fields(EditOp))


@dataclass(frozen=True)
class Edit:
    """Every change from x to x̂, and how large the change is."""

    ops: tuple[EditOp, ...]
    token_distance: int  # Levenshtein distance on lower-cased token texts
    edit_ratio: float  # token_distance / max(len(x), len(x̂)), 0..1

    @property
    def removed_tokens(self) -> tuple[str, ...]:
        return tuple(token for op in self.ops for token in op.removed_tokens)

    @property
    def added_tokens(self) -> tuple[str, ...]:
        return tuple(token for op in self.ops for token in op.added_tokens)

    @property
    def is_identity(self) -> bool:
        # The diff ignores case, so "Great" -> "great" is no edit at all.
        return not self.ops

    def to_dict(self) -> dict:
        return {
            "ops": [op.to_dict() for op in self.ops],
            "token_distance": self.token_distance,
            "edit_ratio": self.edit_ratio,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Edit:
        return cls(
            ops=tuple(EditOp.from_dict(op) for op in data["ops"]),
            token_distance=int(data["token_distance"]),
            edit_ratio=float(data["edit_ratio"]),
        )


def compute_edit(x: Doc, x_hat: Doc) -> Edit:
    """Diff the lower-cased tokens of x and x̂ and widen each change to its phrase."""
    a = lower_words(x)
    b = lower_words(x_hat)
    opcodes = [
        opcode
        for opcode in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        if opcode[0] != "equal"
    ]
    alignment = _alignment_from_opcodes(opcodes, len(x), len(x_hat))
    ops = tuple(
        _edit_op(x, x_hat, kind, (i1, i2), (j1, j2), alignment) for kind, i1, i2, j1, j2 in opcodes
    )
    distance = levenshtein(a, b)
    longest = max(len(a), len(b))
    return Edit(ops=ops, token_distance=distance, edit_ratio=distance / longest if longest else 0.0)


def token_alignment(x: Doc, x_hat: Doc, edit: Edit) -> dict[int, int]:
    """Map each unchanged token of x to its twin in x̂ (the gaps between the ops)."""
    opcodes = [(op.kind, *op.source, *op.target) for op in edit.ops]
    return _alignment_from_opcodes(opcodes, len(x), len(x_hat))


@per_doc
def lower_words(doc: Doc) -> tuple[str, ...]:
    """The lower-cased text of every token: what the diff compares."""
    return tuple(token.lower_ for token in doc)


def levenshtein(a: Sequence[str], b: Sequence[str]) -> int:
    """Edit distance between two token sequences (insert, delete, substitute cost 1)."""
    # A shared prefix or suffix never changes the distance; x̂ is mostly x, so this
    # leaves only the tokens from the first change to the last.
    prefix = 0
    while prefix < len(a) and prefix < len(b) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < len(a) - prefix and suffix < len(b) - prefix and a[-1 - suffix] == b[-1 - suffix]
    ):
        suffix += 1
    a, b = a[prefix : len(a) - suffix], b[prefix : len(b) - suffix]
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    return _bit_parallel_distance(a, b)


def _bit_parallel_distance(text: Sequence[str], pattern: Sequence[str]) -> int:
    """The Levenshtein distance by Myers' bit-vector algorithm (Myers 1999), in the form
    Hyyrö (2001) gives for two whole sequences: exactly the DP table's answer.

    The table has a row per token of `pattern` and a column per token of `text`. Two
    cells next to each other differ by -1, 0 or +1, so a column is kept as bit vectors
    of its vertical differences (`up`: +1, `down`: -1; a bit per row) and the next
    column comes from it in a few integer operations, in one pass over `text`;
    `distance` follows the bottom row. Python's integers are the bit vectors, of
    len(pattern) bits; `~` makes a negative number, so what it touches is masked.
    """
    matches: dict[str, int] = {}  # token -> a bit for each row of the pattern it is in
    for row, token in enumerate(pattern):
        matches[token] = matches.get(token, 0) | (1 << row)
    mask = (1 << len(pattern)) - 1
    bottom = 1 << (len(pattern) - 1)
    up, down = mask, 0  # column 0 is 0, 1, 2, ...: every vertical difference is +1
    distance = len(pattern)
    for token in text:
        match = matches.get(token, 0)
        # Rows whose cell equals the one diagonally above-left of it.
        same = ((((match & up) + up) ^ up) | match | down) & mask
        # The horizontal differences to the previous column.
        right_up = (down | ~(same | up)) & mask
        right_down = up & same
        if right_up & bottom:
            distance += 1
        elif right_down & bottom:
            distance -= 1
        # Row 0 of the table is 0, 1, 2, ...: its horizontal difference is always +1.
        right_up = (right_up << 1) | 1
        up = ((right_down << 1) | ~(same | right_up)) & mask
        down = same & right_up
    return distance


def is_word(token: Token) -> bool:
    """Whether a token carries words rather than punctuation or whitespace."""
    return not (token.is_punct or token.is_space)


def is_clause_head(token: Token) -> bool:
    """A sentence root, a verb, or a clausal dependent: its subtree is a whole clause."""
    return token.head.i == token.i or token.dep_ in CLAUSAL_DEPS or token.pos_ in ("VERB", "AUX")


def lowest_common_ancestor(tokens: Sequence[Token]) -> Token | None:
    """The deepest token dominating all `tokens`, or None across sentences."""
    if not tokens:
        return None
    common: set[int] | None = None
    for token in tokens:
        chain = {token.i, *(ancestor.i for ancestor in token.ancestors)}
        common = chain if common is None else common & chain
    first_chain = [tokens[0], *tokens[0].ancestors]
    return next((token for token in first_chain if token.i in common), None)


def phrase_span(doc: Doc, indices: Iterable[int]) -> Bounds:
    """The smallest parse phrase covering the tokens at `indices` (see design note)."""
    tokens = [doc[i] for i in sorted(set(indices))]
    if not tokens:
        raise ValueError("phrase_span needs at least one token")
    top = lowest_common_ancestor(tokens)
    if top is not None and not is_clause_head(top):
        return top.left_edge.i, top.right_edge.i + 1
    # Under a clause head, keep just the changed words and the phrases they head.
    starts, ends = [], []
    for token in tokens:
        clause = is_clause_head(token)
        starts.append(token.i if clause else token.left_edge.i)
        ends.append(token.i + 1 if clause else token.right_edge.i + 1)
    return min(starts), max(ends)


def char_span(doc: Doc, span: Bounds) -> Bounds:
    """Character offsets in doc.text of a token span (empty spans sit at their position)."""
    start, end = span
    if start >= end:
        offset = doc[start].idx if start < len(doc) else _text_length(doc)
        return offset, offset
    last = doc[end - 1]
    return doc[start].idx, last.idx + len(last.text)


def _edit_op(
    x: Doc, x_hat: Doc, kind: str, source: Bounds, target: Bounds, alignment: dict[int, int]
) -> EditOp:
    source_subtree, target_subtree = _affected_spans(x, x_hat, kind, source, target, alignment)
    removed, added = _tokens(x, source), _tokens(x_hat, target)
    return EditOp(
        kind=kind,
        source=source,
        target=target,
        removed=_tokens_text(removed),
        added=_tokens_text(added),
        source_subtree=source_subtree,
        target_subtree=target_subtree,
        source_chars=char_span(x, source_subtree),
        target_chars=char_span(x_hat, target_subtree),
        removed_tokens=tuple(t.lower_ for t in removed if is_word(t)),
        added_tokens=tuple(t.lower_ for t in added if is_word(t)),
    )


def _tokens(doc: Doc, span: Bounds) -> list[Token]:
    # Not doc[start:end]: a Span that starts at the end of a Doc (an insertion after
    # its last token) finds its start by building the Doc's whole text, a long text's
    # once per op.
    return [doc[i] for i in range(*span)]


def _tokens_text(tokens: Sequence[Token]) -> str:
    """The text of consecutive tokens, as their Span's `.text` gives it."""
    if not tokens:
        return ""
    return "".join(token.text_with_ws for token in tokens[:-1]) + tokens[-1].text


def _text_length(doc: Doc) -> int:
    """len(doc.text), without building the text (it joins every token's)."""
    if not len(doc):
        return 0
    last = doc[-1]
    return last.idx + len(last.text_with_ws)


def _affected_spans(
    x: Doc, x_hat: Doc, kind: str, source: Bounds, target: Bounds, alignment: dict[int, int]
) -> tuple[Bounds, Bounds]:
    if kind == REPLACE:
        return phrase_span(x, range(*source)), phrase_span(x_hat, range(*target))
    if kind == INSERT:
        backward = {j: i for i, j in alignment.items()}
        anchor = _attachment(x_hat, range(*target), backward)
        if anchor is None:
            return (source[0], source[0]), phrase_span(x_hat, range(*target))
        return phrase_span(x, [backward[anchor]]), phrase_span(x_hat, [*range(*target), anchor])
    anchor = _attachment(x, range(*source), alignment)
    if anchor is None:
        return phrase_span(x, range(*source)), (target[0], target[0])
    return phrase_span(x, [*range(*source), anchor]), phrase_span(x_hat, [alignment[anchor]])


def _attachment(doc: Doc, changed: range, aligned: dict[int, int]) -> int | None:
    """The unchanged word that inserted (or deleted) tokens modify, if any.

    An insertion has no span of its own on the other side, so the phrase it
    modifies ("woman" for "little") stands in for it on both sides.
    """
    top = lowest_common_ancestor([doc[i] for i in changed])
    if top is None:
        return None
    head = top if top.i not in changed else top.head
    if head.i in changed:  # the change heads its own sentence
        return None
    if head.i in aligned and not is_clause_head(head):
        return head.i
    # A modifier of a clause head ("not" under "is"): the adjacent word of the same
    # clause is the phrase it changes ("great" in "is not great").
    for neighbour in (changed.stop, changed.start - 1):
        if 0 <= neighbour < len(doc) and neighbour in aligned:
            token = doc[neighbour]
            if is_word(token) and _sentence_root(token) == _sentence_root(head):
                return _phrase_head(token, aligned).i
    return head.i if head.i in aligned else None


def _phrase_head(token: Token, aligned: dict[int, int]) -> Token:
    # A bare function word ("the" before "kids") stands for the phrase it opens.
    parent = token.head
    if any(token.children) or is_clause_head(parent) or parent.i not in aligned:
        return token
    return parent


def _sentence_root(token: Token) -> int:
    while token.head.i != token.i:
        token = token.head
    return token.i


def _alignment_from_opcodes(
    opcodes: Sequence[tuple[str, int, int, int, int]], x_len: int, y_len: int
) -> dict[int, int]:
    # The diff covers both sequences, so the gaps between changes are equal blocks.
    alignment: dict[int, int] = {}
    i = j = 0
    for _kind, i1, i2, j1, j2 in (*opcodes, ("end", x_len, x_len, y_len, y_len)):
        alignment.update(zip(range(i, i1), range(j, j1), strict=False))
        i, j = i2, j2
    return alignment


def _jsonable(value: object) -> object:
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [_jsonable(item) for item in value]
    return value
