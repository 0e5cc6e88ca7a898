"""What changed between an original x and a counterfactual x̂, as segments a page can mark up.

Words are compared as tokens (words and punctuation, keeping their spacing), so a
worker sees exactly the words added (highlighted) and the words removed (struck
through, at the place they were), as Polyjuice Figure 5 shows them.
"""

import difflib
import re
from dataclasses import dataclass

_TOKEN = re.compile(r"(\w+(?:['\u2019]\w+)*|[^\w\s])(\s*)", re.UNICODE)

SAME = "same"
ADDED = "added"
REMOVED = "removed"


@dataclass(frozen=True)
class Segment:
    kind: str  # same | added | removed
    text: str


def _tokens(text: str) -> tuple[list[str], list[str], str]:
    """Tokens, the spacing after each, and any leading spacing."""
    leading = text[: len(text) - len(text.lstrip())]
    words, spacing = [], []
    for match in _TOKEN.finditer(text):
        words.append(match.group(1))
        spacing.append(match.group(2))
    return words, spacing, leading


def _joined(words: list[str], spacing: list[str]) -> str:
    return "".join(word + space for word, space in zip(words, spacing, strict=True))


def _append(segments: list[Segment], kind: str, text: str) -> None:
    if not text:
        return
    if segments and segments[-1].kind == kind:
        segments[-1] = Segment(kind, segments[-1].text + text)
    else:
        segments.append(Segment(kind, text))


def change_segments(original: str, counterfactual: str) -> list[Segment]:
    """x̂ as segments: unchanged, added (in x̂ only) and removed (in x only, kept in place)."""
    old, old_spacing, _ = _tokens(original)
    new, new_spacing, leading = _tokens(counterfactual)
    segments: list[Segment] = []
    _append(segments, SAME, leading)
    # Case-insensitive match so "The" -> "the" at a new sentence start is not a change.
    matcher = difflib.SequenceMatcher(
        a=[word.lower() for word in old], b=[word.lower() for word in new], autojunk=False
    )
    for operation, a_start, a_end, b_start, b_end in matcher.get_opcodes():
        if operation in ("delete", "replace"):
            if segments and not segments[-1].text[-1:].isspace():
                _append(segments, SAME, " ")
            removed = _joined(old[a_start:a_end], old_spacing[a_start:a_end]).rstrip()
            _append(segments, REMOVED, removed)
            following = new[b_start] if b_start < len(new) else ""
            if following[:1].isalnum():
                _append(segments, SAME, " ")
        if operation == "equal":
            _append(segments, SAME, _joined(new[b_start:b_end], new_spacing[b_start:b_end]))
        elif operation in ("insert", "replace"):
            added = _joined(new[b_start:b_end], new_spacing[b_start:b_end])
            stripped = added.rstrip()
            _append(segments, ADDED, stripped)
            _append(segments, SAME, added[len(stripped) :])
    while segments and segments[-1].kind == SAME and not segments[-1].text.strip():
        segments.pop()
    return segments
