"""Label-directed prompts: ask for the smallest edit that makes x's label Y (issue #21, item 3).

Polyjuice itself is label-agnostic (§3): its prompts name a control code, never a
label, and label flips are found afterwards. When a campaign wants flips, this
strategy names the label x has and the label to reach, shows worked examples of
minimal label-changing edits (the campaign's own counterfactual pairs where it has
them, the task's examples below otherwise) and asks for the whole edited sentence
on one line, which a small instruction model writes far more reliably than
Polyjuice's `[ANSWER]` format:

    positive: The soup was warm and tasty.
    negative [lexical]: The soup was cold and tasty.
    ...
    positive: The film was a joy to watch.          <- the original (context part)
    negative [lexical]: The film was                <- this prompt's own ending (a rewrite
                                                       from "a joy" on)

Two kinds of prompt, both begun for the model with x's own words: without that, a 135M
model writes a new sentence after the examples' pattern instead of editing x.

- A **rewrite from a point on** (`x's words before the blank [BLANK]`, the blank
  running to the end; x's first word for a whole-sentence rewrite): the model writes
  the rest of the edited sentence on its line. A random blank set becomes one of these,
  from its first blank (`tail_blank`), so an original's prompts edit it from several
  points, not only from the start.
- A **quoted replacement** for a blank the researcher or a slicing function placed
  (targeted): the hint `replacing "..."` (the words under the first blank), then x's
  words before it and an open quote; the model writes the replacement and closes it.

A small model keeps the first far better: on the CAD benchmark originals (`generation
evaluate --originals 10`), 13 % of the quoted replacements of random spans passed the
sanity and fluency filters, against 85 % of the rewrites (docs/generation-quality.md).
`generation.sanity.outside_blanks` drops a candidate that changed anything outside the
blanks (a rewrite from a point on: x's words before it).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from generation.decoding import PromptParts
from generation.prompts import fill_blanks, has_leak, has_written_leak
from generation.tokens import BLANK, DELETE, INSERT, LEXICAL, NEGATION, code_token

STRATEGY_NAME = "label"
_WORD = re.compile(r"\w+(?:'\w+)?|[^\w\s]")
# Worked examples shown before every prompt: enough to fix the format, few enough
# that the shared prefix stays short on CPU.
MAX_EXAMPLES = 6


@dataclass(frozen=True)
class LabelExample:
    """One worked example: x with its label, and a minimal edit of it with another label."""

    source: str
    source_label: str
    target: str
    target_label: str
    code: str = ""  # the control code the edit shows, where known


# Minimal label-changing edits in our own words, by task label set (the task template's
# examples, used when a campaign has no counterfactual pairs of its own).
TEMPLATE_EXAMPLES: dict[frozenset[str], tuple[LabelExample, ...]] = {
    frozenset({"positive", "negative"}): (
        LabelExample(
            "The soup tasted great.",
            "positive",
            "The soup tasted awful.",
            "negative",
            LEXICAL,
        ),
        LabelExample(
            "I would not recommend this hotel to anyone.",
            "negative",
            "I would recommend this hotel to anyone.",
            "positive",
            NEGATION,
        ),
        LabelExample(
            "The staff were friendly and the room was clean.",
            "positive",
            "The staff were friendly and the room was filthy.",
            "negative",
            LEXICAL,
        ),
        LabelExample(
            "The plot was a boring mess.",
            "negative",
            "The plot was a thrilling ride.",
            "positive",
            LEXICAL,
        ),
        LabelExample(
            "This is a movie I will watch again.",
            "positive",
            "This is a movie I will never watch again.",
            "negative",
            INSERT,
        ),
        LabelExample(
            "The ending was not at all satisfying.",
            "negative",
            "The ending was satisfying.",
            "positive",
            DELETE,
        ),
    ),
    frozenset({"entailment", "neutral", "contradiction"}): (
        LabelExample(
            "A man is playing a guitar.",
            "entailment",
            "A man is playing a piano.",
            "contradiction",
            LEXICAL,
        ),
        LabelExample(
            "A woman is outside.",
            "entailment",
            "A woman is outside waiting for a bus.",
            "neutral",
            INSERT,
        ),
        LabelExample(
            "Two dogs are sleeping.",
            "contradiction",
            "Two dogs are lying down.",
            "entailment",
            LEXICAL,
        ),
        LabelExample(
            "The child is not eating.",
            "contradiction",
            "The child is eating.",
            "entailment",
            NEGATION,
        ),
    ),
}


def examples_for(
    labels: Collection[str], own: Sequence[LabelExample] = ()
) -> tuple[LabelExample, ...]:
    """The worked examples to show: the campaign's own pairs first, then the template's
    for this label set (matched case-blind, written in the task's spelling), at most
    MAX_EXAMPLES; empty when neither has any."""
    spelling = {str(label).lower(): str(label) for label in labels}
    template = tuple(
        dataclasses.replace(
            example,
            source_label=spelling[example.source_label],
            target_label=spelling[example.target_label],
        )
        for example in TEMPLATE_EXAMPLES.get(frozenset(spelling), ())
    )
    chosen = list(own[:MAX_EXAMPLES])
    chosen += template[: MAX_EXAMPLES - len(chosen)] if len(chosen) < 2 else ()
    return tuple(chosen)


def target_labels(label: str, choices: Sequence[str]) -> list[str]:
    """The labels an edit of x may aim for: every other label of the task, in order."""
    return [choice for choice in dict.fromkeys(choices) if choice != label]


def blanked_words(original: str, blanked: str) -> list[str]:
    """The words of `original` under each [BLANK] of `blanked` (empty where none matched)."""
    # Spaces around a blank are optional: an insertion point ("pick [BLANK] it") has one
    # space in x, not two.
    literal = [re.escape(part.strip()) for part in blanked.split(BLANK)]
    match = re.fullmatch(r"\s*(.*?)\s*".join(literal), original.strip(), flags=re.DOTALL)
    if match is None:
        return []
    return [group.strip() for group in match.groups()]


def first_blank_only(original: str, blanked: str) -> str:
    """`blanked` with every blank but the first filled back with x's own words.

    A label-directed prompt asks for one replacement: a small model keeps one quoted
    span apart from the rest far better than several `[ANSWER]`s.
    """
    if blanked.strip() == BLANK or blanked.count(BLANK) < 2:
        return blanked
    words = blanked_words(original, blanked)
    if not words:
        return blanked
    parts = blanked.split(BLANK)
    text = parts[0] + BLANK + parts[1]
    for word, after in zip(words[1:], parts[2:], strict=True):
        text += word + after if word else after
    return re.sub(r"[ \t]{2,}", " ", text)


def tail_blank(original: str, blanked: str) -> str | None:
    """x's words before the first blank of `blanked` that has any, then one blank to the
    end of x (a rewrite from that point on); None where no blank has words before it
    (that is the whole-sentence rewrite) or the blanks do not match x."""
    if BLANK not in blanked or _is_whole(blanked):
        return None
    words = blanked_words(original, blanked)
    if not words:
        return None
    parts = blanked.split(BLANK)
    before = parts[0]
    for index in range(len(words)):
        if before.strip():
            return f"{before.strip()} {BLANK}"
        before += words[index] + parts[index + 1]
    return None


def changed_span(source: str, target: str) -> tuple[str, str, str] | None:
    """(text before, text replaced, replacement) where `target` differs from `source` in
    one region of words and punctuation; None when they are equal or differ in several."""
    old, new = list(_WORD.finditer(source)), list(_WORD.finditer(target))
    matcher = difflib.SequenceMatcher(
        a=[m.group() for m in old], b=[m.group() for m in new], autojunk=False
    )
    changes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if len(changes) != 1:
        return None
    _, i1, i2, j1, j2 = changes[0]
    start = old[i1].start() if i1 < len(old) else len(source)
    stop = old[i2 - 1].end() if i2 > i1 else start
    new_text = target[new[j1].start() : new[j2 - 1].end()] if j2 > j1 else ""
    return source[:start].rstrip(), source[start:stop], new_text


def _label_line(label: str, code: str, hint: str = "") -> str:
    return f"{label}{' ' + code_token(code) if code else ''}{hint}:"


def _replacing(span: str) -> str:
    return f', replacing "{span}"'


@dataclass(frozen=True)
class LabelDirectedStrategy:
    """Worked label flips, then `label: x`, then either a whole rewrite begun with x's first
    word, or `target [code], replacing "span": words before "` whose continuation is the
    replacement up to its closing quote."""

    examples: tuple[LabelExample, ...] = ()
    name: str = STRATEGY_NAME
    stops_at_newline: bool = True

    def shared(self, original: str = "") -> str:
        """Each example twice: as a whole rewrite, and as one quoted replacement. An example
        of `original` itself is left out: shown its own worked answer, the model hands it
        back nearly word for word (a copy of a pair the campaign already has)."""
        lines = []
        for example in self.examples:
            if original and example.source.strip() == original.strip():
                continue
            source = f"{example.source_label}: {example.source.strip()}"
            lines += [source, f"{_label_line(example.target_label, example.code)} {example.target}"]
            span = changed_span(example.source, example.target)
            if span is None or not span[1]:
                continue  # an insertion replaces nothing: it has no quoted form
            before, old, new = span
            hint = _replacing(old)
            head = f"{before} " if before else ""
            lines += [
                source,
                f'{_label_line(example.target_label, example.code, hint)} {head}"{new}"',
            ]
        return "".join(f"{line}\n" for line in lines)

    def split(self, request) -> PromptParts:
        """Examples (shared by every prompt), x with its label (by x's prompts), then this
        prompt's target label, code, and the edited sentence begun for the model."""
        context = f"{request.label}: {request.original.strip()}\n"
        if request.context:
            context = f"({request.context.strip()})\n" + context
        start = _rewrite_start(request)
        if start is not None:
            own = _label_line(request.target_label, request.code) + (f" {start}" if start else "")
        else:
            old = blanked_words(request.original, request.blanked)
            before = request.blanked.split(BLANK, 1)[0].strip()
            hint = _replacing(old[0]) if old and old[0] else ""
            head = f"{before} " if before else ""
            own = f'{_label_line(request.target_label, request.code, hint)} {head}"'
        return PromptParts(self.shared(request.original), context, own)

    def render(self, request) -> str:
        return self.split(request).text

    def answers_needed(self, request) -> int:
        return 0  # ended by the newline (a replacement: parsed up to its closing quote)

    def parse(self, request, continuation: str, specials: Collection[str] = ()) -> str | None:
        written = continuation.split("\n", 1)[0]
        start = _rewrite_start(request)
        if start is not None:
            text = _unquoted_end((start + written).strip())
            if not written.strip() or not text or has_written_leak(text, specials):
                return None
            return text
        replacement = _replacement(written, request.blanked.split(BLANK, 1)[1].strip())
        if replacement is None:
            return None
        if has_written_leak(replacement, specials):
            return None
        text = fill_blanks(request.blanked, [replacement])
        if text is None or has_leak(text, specials):
            return None
        return text


def _replacement(written: str, after: str) -> str | None:
    """The replacement up to its closing quote; without one, what precedes x's own words
    after the blank when the model wrote them out (`awful for kids.`); else None."""
    if '"' in written:
        return written.split('"', 1)[0].strip()
    written = written.strip()
    if after and written.endswith(after) and len(written) > len(after):
        return written[: -len(after)].strip()
    return None  # the replacement never ended


def _unquoted_end(text: str) -> str:
    """`text` without a closing quote that opens nowhere (the examples' quoted form leaking
    into a rewrite); x's own quotes, begun for the model, stay."""
    if text.endswith('"') and text.count('"') % 2:
        return text[:-1].rstrip()
    return text


def _is_whole(blanked: str) -> bool:
    return blanked.strip() == BLANK


def _rewrite_start(request) -> str | None:
    """What a rewrite is begun with: x's first word for the whole sentence (none for a
    one-word x), x's words before a blank that runs to the end; None for a replacement."""
    if _is_whole(request.blanked):
        words = request.original.split()
        return words[0] if len(words) > 1 else ""
    before, after = request.blanked.split(BLANK, 1)
    return before.strip() if not after.strip() and before.strip() else None


def with_codes(
    examples: Sequence[LabelExample], code_of: Callable[[str, str], str]
) -> tuple[LabelExample, ...]:
    """The examples with each unknown code detected on (source, target) by `code_of`."""
    return tuple(
        example
        if example.code
        else LabelExample(
            example.source,
            example.source_label,
            example.target,
            example.target_label,
            code_of(example.source, example.target),
        )
        for example in examples
    )
