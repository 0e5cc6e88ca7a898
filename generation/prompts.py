"""The Polyjuice prompt format and strict answer parsing (Polyjuice §3.2, Figure 2).

A prompt is `x <|perturb|> [code] blanked [SEP]`; the model answers
`a1 [ANSWER] a2 [ANSWER]`, one answer per [BLANK], `[EMPTY]` for a deletion.
Parsing is strict: a wrong number of answers, an answer holding a special token or
any bracket or pipe (what decoding's writing rule bans, `generation.constraints`), or
a result still holding a special token, drops the candidate instead of guessing. An
original's own bracketed aside ("[1]") may stay in an infill; the model may not write one.
"""

import re
from collections.abc import Collection

from generation.tokens import ANSWER, BLANK, CODE_TOKENS, EMPTY, PERTURB, SEP, code_token

LEAK_PATTERN = re.compile(
    "|".join(re.escape(token) for token in (PERTURB, BLANK, SEP, ANSWER, EMPTY, *CODE_TOKENS))
    + r"|<\|[^|<>\s]*\|>"
)
# What the model itself may never write outside [ANSWER] / [EMPTY]: any bracket
# (`[EQ]`, a half-written `[ANS`), any pipe (`<|im_start|>`).
WRITTEN_LEAK_PATTERN = re.compile(r"[\[\]|]")


def build_prompt(original: str, code: str, blanked: str) -> str:
    """`x <|perturb|> [code] blanked [SEP]`, exactly as the published model was trained."""
    return f"{original.strip()} {PERTURB} {code_token(code)} {blanked.strip()} {SEP}"


def build_answer(answers: list[str]) -> str:
    """The training target after [SEP]: `a1 [ANSWER] a2 [ANSWER]` (empty answers as [EMPTY])."""
    return " ".join(f"{answer.strip() or EMPTY} {ANSWER}" for answer in answers)


def parse_answers(continuation: str, blank_count: int) -> list[str] | None:
    """The answers in a model continuation, or None when they do not fit the blanks.

    The continuation is what the model wrote after `[SEP]`. Anything after the last
    expected [ANSWER] (end-of-text, a new example) is ignored.
    """
    pieces = continuation.split(ANSWER)
    if len(pieces) <= blank_count:
        return None  # fewer [ANSWER] markers than blanks
    answers = [piece.strip() for piece in pieces[:blank_count]]
    parsed = []
    for answer in answers:
        if answer == EMPTY:
            parsed.append("")
            continue
        if not answer or has_written_leak(answer) or "\n" in answer:
            return None
        parsed.append(answer)
    return parsed


def fill_blanks(blanked: str, answers: list[str]) -> str | None:
    """Put each answer in its [BLANK]; an empty answer deletes the blank and one space."""
    parts = blanked.split(BLANK)
    if len(parts) - 1 != len(answers):
        return None
    text = parts[0]
    for answer, after in zip(answers, parts[1:], strict=True):
        if answer == "":
            # Deleting "great" from "is [BLANK] for" must leave "is for", not "is  for".
            if text.endswith(" ") and (
                after.startswith(" ") or after[:1] in {",", ".", "!", "?", ";", ":", ""}
            ):
                text = text[:-1]
            text += after
            continue
        if text and text[-1].isalnum() and answer[0].isalnum():
            text += " "  # "did[BLANK]" + "not" must not read "didnot"
        text += answer + after
    text = re.sub(r"[ \t]{2,}", " ", text).strip()
    return text or None


def has_leak(text: str, specials: Collection[str] = ()) -> bool:
    """True when a format or special token (one of the tokenizer's `specials`) survived
    into a candidate."""
    return bool(LEAK_PATTERN.search(text)) or any(special in text for special in specials)


def has_written_leak(text: str, specials: Collection[str] = ()) -> bool:
    """True when text the model wrote holds a marker, bracket, pipe or special token."""
    return bool(WRITTEN_LEAK_PATTERN.search(text)) or has_leak(text, specials)


def candidate_from_answers(
    blanked: str, continuation: str, specials: Collection[str] = ()
) -> str | None:
    """The filled-in candidate for one continuation, or None when it is malformed."""
    answers = parse_answers(continuation, blanked.count(BLANK))
    if answers is None:
        return None
    text = fill_blanks(blanked, answers)
    if text is None or has_leak(text, specials):
        return None
    return text
