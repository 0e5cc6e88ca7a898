"""Prompting strategies: how a request becomes model input, and a continuation a candidate.

`native` is the Polyjuice format itself, for models fine-tuned on it (the
published `uw-hai/polyjuice`, or our training command's output). The packaged
SmolLM2 never saw that format, so `fewshot` shows it a few worked examples first:
Polyjuice-format infilling for span blanks, and `Sentence:` / `[code]` rewrites
for whole-sentence blanks (SPEC.md: SmolLM2 rewrites sensibly that way on CPU).
"""

from dataclasses import dataclass

from generation.prompts import build_answer, build_prompt, candidate_from_answers, has_leak
from generation.tokens import BLANK, PERTURB, code_token


@dataclass(frozen=True)
class PromptRequest:
    original: str  # x
    code: str  # control code to ask for
    blanked: str  # x with [BLANK]s; exactly "[BLANK]" for a whole-sentence rewrite

    @property
    def is_sentence(self) -> bool:
        return self.blanked.strip() == BLANK


# Worked examples, one (x, code, blanked, answers) per line, in our own words.
INFILL_EXAMPLES: dict[str, tuple[str, str, list[str]]] = {
    "negation": ("The soup was warm and tasty.", "The soup was [BLANK] warm and tasty.", ["not"]),
    "quantifier": (
        "A child is playing in the park.",
        "[BLANK] playing in the park.",
        ["Four children are"],
    ),
    "shuffle": (
        "The cat chased the dog across the yard.",
        "The [BLANK] chased the [BLANK] across the yard.",
        ["dog", "cat"],
    ),
    "lexical": (
        "She loved the quiet little hotel.",
        "She [BLANK] the quiet little hotel.",
        ["hated"],
    ),
    "resemantic": (
        "He read a book on the train.",
        "He read a book [BLANK].",
        ["while waiting for his sister"],
    ),
    "insert": (
        "The waiter brought our food.",
        "The [BLANK] waiter brought our food.",
        ["friendly"],
    ),
    "delete": (
        "The very old bridge was closed.",
        "The [BLANK] old bridge was closed.",
        ["[EMPTY]"],
    ),
    "restructure": ("The letter was written by my aunt.", "[BLANK] the letter.", ["My aunt wrote"]),
}

REWRITE_EXAMPLES: dict[str, tuple[str, str]] = {
    "negation": ("The soup was warm and tasty.", "The soup was not warm and tasty."),
    "quantifier": ("A child is playing in the park.", "Four children are playing in the park."),
    "shuffle": (
        "The cat chased the dog across the yard.",
        "The dog chased the cat across the yard.",
    ),
    "lexical": ("She loved the quiet little hotel.", "She hated the quiet little hotel."),
    "resemantic": ("He read a book on the train.", "He read a book while waiting for his sister."),
    "insert": ("The waiter brought our food.", "The friendly waiter brought our food quickly."),
    "delete": ("The very old bridge was closed.", "The bridge was closed."),
    "restructure": ("The letter was written by my aunt.", "My aunt wrote the letter."),
}

EXAMPLES_PER_PROMPT = 3


def _example_codes(code: str) -> list[str]:
    """The requested code's example last (closest to the query), two others before it."""
    others = [other for other in INFILL_EXAMPLES if other != code]
    start = sum(map(ord, code)) % len(others)  # fixed per code, varied across codes
    picked = [others[(start + step) % len(others)] for step in range(EXAMPLES_PER_PROMPT - 1)]
    return [*picked, code] if code in INFILL_EXAMPLES else picked


class NativeStrategy:
    """The Polyjuice format as is; the model stops at its end-of-text token."""

    name = "native"
    stops_at_newline = False

    def split(self, request: PromptRequest) -> tuple[str, str]:
        """(shared prefix, own prompt): nothing is shared in the native format."""
        return "", build_prompt(request.original, request.code, request.blanked)

    def render(self, request: PromptRequest) -> str:
        return "".join(self.split(request))

    def answers_needed(self, request: PromptRequest) -> int:
        """[ANSWER] markers that complete a continuation (decoding stops a row there)."""
        return request.blanked.count(BLANK)

    def parse(self, request: PromptRequest, continuation: str) -> str | None:
        return candidate_from_answers(request.blanked, continuation)


class FewShotStrategy:
    """Worked examples before the query, one per line; the continuation ends at a newline."""

    name = "fewshot"
    stops_at_newline = True

    def split(self, request: PromptRequest) -> tuple[str, str]:
        """(worked examples, query): the examples depend only on the code and the blank kind,
        so decoding computes them once for all prompts that share them."""
        codes = _example_codes(request.code)
        lines = []
        if request.is_sentence:
            for code in codes:
                source, target = REWRITE_EXAMPLES[code]
                lines += [f"Sentence: {source}", f"{code_token(code)} {target}"]
            query = f"Sentence: {request.original.strip()}\n{code_token(request.code)}"
        else:
            for code in codes:
                source, blanked, answers = INFILL_EXAMPLES[code]
                lines.append(f"{build_prompt(source, code, blanked)} {build_answer(answers)}")
            query = build_prompt(request.original, request.code, request.blanked)
        return "\n".join(lines) + "\n", query

    def render(self, request: PromptRequest) -> str:
        return "".join(self.split(request))

    def answers_needed(self, request: PromptRequest) -> int:
        # A rewrite ends at the newline; an infill after its answers (or the newline).
        return 0 if request.is_sentence else request.blanked.count(BLANK)

    def parse(self, request: PromptRequest, continuation: str) -> str | None:
        first_line = continuation.split("\n", 1)[0]
        if request.is_sentence:
            text = first_line.strip()
            return text if text and not has_leak(text) else None
        return candidate_from_answers(request.blanked, first_line)


STRATEGIES = {"native": NativeStrategy(), "fewshot": FewShotStrategy()}


def knows_polyjuice_format(tokenizer) -> bool:
    """A tokenizer fine-tuned for Polyjuice has <|perturb|> as one token of its own."""
    return len(tokenizer.tokenize(PERTURB)) == 1


def strategy_for(name: str, tokenizer) -> NativeStrategy | FewShotStrategy:
    if name == "auto":
        return STRATEGIES["native" if knows_polyjuice_format(tokenizer) else "fewshot"]
    try:
        return STRATEGIES[name]
    except KeyError:
        raise ValueError(
            f"Unknown prompting strategy {name!r}; choose auto, native or fewshot."
        ) from None
