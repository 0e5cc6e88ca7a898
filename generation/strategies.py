"""Prompting strategies: how a request becomes model input, and a continuation a candidate.

`native` is the Polyjuice format itself, for models fine-tuned on it (the
published `uw-hai/polyjuice`, or our training command's output). The packaged
SmolLM2 never saw that format, so `fewshot` shows it a few worked examples first:
Polyjuice-format infilling for span blanks, and `Sentence:` / `[code]` rewrites
for whole-sentence blanks (SPEC.md: SmolLM2 rewrites sensibly that way on CPU).
"""

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from generation.decoding import PromptParts
from generation.prompts import (
    build_answer,
    build_prompt,
    candidate_from_answers,
    has_written_leak,
)
from generation.tokens import BLANK, PERTURB, code_token


@dataclass(frozen=True)
class PromptRequest:
    original: str  # x
    code: str  # control code to ask for
    blanked: str  # x with [BLANK]s; exactly "[BLANK]" for a whole-sentence rewrite
    # Label-directed prompts only (generation.label_directed): x's label, the label the
    # edit should reach, and a pair task's fixed context.
    label: str = ""
    target_label: str = ""
    context: str = ""

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


def _examples_text(sentence: bool) -> str:
    """One worked example per control code, the same for every prompt of a blank kind.

    Showing every code (not just the requested one) lets decoding compute the
    examples once for all prompts, and each original once for all its codes.
    """
    lines = []
    for code in INFILL_EXAMPLES:
        if sentence:
            source, target = REWRITE_EXAMPLES[code]
            lines += [f"Sentence: {source}", f"{code_token(code)} {target}"]
        else:
            source, blanked, answers = INFILL_EXAMPLES[code]
            lines.append(f"{build_prompt(source, code, blanked)} {build_answer(answers)}")
    return "\n".join(lines) + "\n"


class NativeStrategy:
    """The Polyjuice format as is; the model stops at its end-of-text token."""

    name = "native"
    stops_at_newline = False

    def split(self, request: PromptRequest) -> PromptParts:
        """`x <|perturb|>` is shared by the prompts of one original; the rest is their own."""
        prompt = build_prompt(request.original, request.code, request.blanked)
        context = f"{request.original.strip()} {PERTURB}"
        return PromptParts("", context, prompt[len(context) :])

    def render(self, request: PromptRequest) -> str:
        return self.split(request).text

    def answers_needed(self, request: PromptRequest) -> int:
        """[ANSWER] markers that complete a continuation (decoding stops a row there)."""
        return request.blanked.count(BLANK)

    def parse(
        self, request: PromptRequest, continuation: str, specials: Collection[str] = ()
    ) -> str | None:
        """The candidate, or None when malformed; `specials` are the tokenizer's special
        token texts, which no candidate may hold."""
        return candidate_from_answers(request.blanked, continuation, specials)


class FewShotStrategy:
    """Worked examples before the query, one per line; the continuation ends at a newline."""

    name = "fewshot"
    stops_at_newline = True

    def split(self, request: PromptRequest) -> PromptParts:
        """Worked examples (shared by every prompt of a blank kind), then the original
        (shared by its prompts), then this prompt's own ending."""
        if request.is_sentence:
            context = f"Sentence: {request.original.strip()}\n"
            own = code_token(request.code)
        else:
            prompt = build_prompt(request.original, request.code, request.blanked)
            context = f"{request.original.strip()} {PERTURB}"
            own = prompt[len(context) :]
        return PromptParts(_examples_text(request.is_sentence), context, own)

    def render(self, request: PromptRequest) -> str:
        return self.split(request).text

    def answers_needed(self, request: PromptRequest) -> int:
        # A rewrite ends at the newline; an infill after its answers (or the newline).
        return 0 if request.is_sentence else request.blanked.count(BLANK)

    def parse(
        self, request: PromptRequest, continuation: str, specials: Collection[str] = ()
    ) -> str | None:
        first_line = continuation.split("\n", 1)[0]
        if request.is_sentence:
            text = first_line.strip()  # the model wrote all of it
            return text if text and not has_written_leak(text, specials) else None
        return candidate_from_answers(request.blanked, first_line, specials)


TRAINING_REPORT = "cfannotate_training.json"

STRATEGIES = {"native": NativeStrategy(), "fewshot": FewShotStrategy()}


def knows_polyjuice_format(tokenizer) -> bool:
    """A tokenizer fine-tuned for Polyjuice has <|perturb|> as one token of its own."""
    return len(tokenizer.tokenize(PERTURB)) == 1


def _trained_by_us(model_name: str) -> bool:
    """A directory written by `python -m generation train` (it leaves its report there)."""
    return bool(model_name) and (Path(model_name).expanduser() / TRAINING_REPORT).is_file()


def strategy_for(name: str, tokenizer, model_name: str = "") -> NativeStrategy | FewShotStrategy:
    """The named strategy; `auto` prompts natively any model trained on the format: one
    whose tokenizer has the format's tokens (our training command adds them), or the
    published Polyjuice models, which learned the markers as plain GPT-2 text."""
    if name == "auto":
        native = (
            knows_polyjuice_format(tokenizer)
            or "polyjuice" in model_name.lower()
            or _trained_by_us(model_name)
        )
        return STRATEGIES["native" if native else "fewshot"]
    try:
        return STRATEGIES[name]
    except KeyError:
        raise ValueError(
            f"Unknown prompting strategy {name!r}; choose auto, native or fewshot."
        ) from None
