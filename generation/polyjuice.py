"""The Polyjuice generator: blanks from the parse, a prompt per (code, blank set), batched decoding.

It returns raw candidates; `generation.postprocess` dedupes them and adds edits,
control codes, relationships and fluency, the same way for every generator.
"""

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from generation.blanks import blanked_text, count_blanks, random_blank_sets, targeted_blank_sets
from generation.decoding import DecodingConfig, generate_continuations
from generation.parsing import ParseCache
from generation.records import CandidateRecord, OriginalRecord
from generation.strategies import PromptRequest, strategy_for
from generation.tokens import BLANK, CONTROL_CODES, DELETE, INSERT, LEXICAL, NEGATION, RESEMANTIC

GENERATOR_NAME = "polyjuice"
# Room per blank for a short insertion and its " [ANSWER]" marker.
INFILL_TOKENS_PER_BLANK = 8
# Polyjuice's codes when the caller names none (its `perturb()` default).
DEFAULT_CODES = (LEXICAL, RESEMANTIC, NEGATION, INSERT, DELETE)


@dataclass(frozen=True)
class PolyjuiceSettings:
    codes: tuple[str, ...] = DEFAULT_CODES
    strategy: str = "auto"  # auto | native | fewshot (see generation.strategies)
    random_blank_sets: int = 3  # per original, besides the whole-sentence blank
    max_blanks: int = 3  # spans per blank set
    sentence_blank: bool = True  # also ask for a free rewrite of the whole sentence
    decoding: DecodingConfig = field(default_factory=DecodingConfig)
    seed: int = 0

    def __post_init__(self) -> None:
        unknown = [code for code in self.codes if code not in CONTROL_CODES]
        if unknown or not self.codes:
            raise ValueError(
                f"Unknown control code(s) {unknown}; choose from {', '.join(CONTROL_CODES)}."
                if unknown
                else "Give at least one control code."
            )


@dataclass(frozen=True)
class PerturbTarget:
    """One original to perturb, optionally with explicit blanks or token spans (targeting)."""

    original: OriginalRecord
    blanked: tuple[str, ...] = ()  # e.g. "It is [BLANK] for kids."
    spans: tuple[tuple[int, int], ...] = ()  # token spans of x to blank (slicing functions)
    codes: tuple[str, ...] = ()  # overrides the settings' codes


@dataclass
class PolyjuiceRun:
    candidates: list[CandidateRecord]
    prompts: int = 0
    continuations: int = 0
    malformed: int = 0


def _blanked_texts(
    target: PerturbTarget, parses: ParseCache, settings: PolyjuiceSettings, rng: random.Random
) -> list[str]:
    if target.blanked:
        for text in target.blanked:
            if count_blanks(text) == 0:
                raise ValueError(f"The blanked text {text!r} has no [BLANK].")
        return list(dict.fromkeys(target.blanked))
    doc = parses.parse(target.original.text)
    if target.spans:
        blank_sets = targeted_blank_sets(doc, list(target.spans))
    else:
        blank_sets = random_blank_sets(
            doc,
            rng,
            count=settings.random_blank_sets,
            max_spans=settings.max_blanks,
            include_sentence=settings.sentence_blank,
        )
    return list(dict.fromkeys(blanked_text(doc, blank_set) for blank_set in blank_sets))


def answer_budgets(tokenizer, requests: list[PromptRequest], decoding: DecodingConfig) -> list[int]:
    """New tokens each request may take: a rewrite about the original's length, an infill
    about twice what its blanks removed, plus room for the [ANSWER] markers."""
    texts = list(
        dict.fromkeys(
            [request.original for request in requests]
            + [request.blanked.replace(BLANK, "") for request in requests]
        )
    )
    lengths = (
        dict(
            zip(
                texts,
                (len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]),
                strict=True,
            )
        )
        if texts
        else {}
    )
    budgets = []
    for request in requests:
        original = lengths[request.original]
        if request.is_sentence:
            budgets.append(decoding.max_new_tokens(original))
            continue
        removed = max(0, original - lengths[request.blanked.replace(BLANK, "")])
        blanks = count_blanks(request.blanked)
        budgets.append(
            min(decoding.max_new_tokens_cap, 2 * removed + INFILL_TOKENS_PER_BLANK * blanks + 2)
        )
    return budgets


def polyjuice_generate(
    targets: list[PerturbTarget],
    settings: PolyjuiceSettings,
    *,
    lm,
    parses: ParseCache,
    progress: Callable[[int], None] | None = None,
) -> PolyjuiceRun:
    """Raw candidates for every target, from one batched decoding pass over all prompts."""
    strategy = strategy_for(settings.strategy, lm.tokenizer, str(lm.name))
    rng = random.Random(settings.seed)

    # 1. Parse every original once, in one spaCy batch.
    parses.parse_many(target.original.text for target in targets)

    # 2. One request per (original, code, blanked text).
    requests: list[tuple[PerturbTarget, PromptRequest]] = []
    for target in targets:
        codes = target.codes or settings.codes
        for blanked in _blanked_texts(target, parses, settings, rng):
            for code in codes:
                requests.append((target, PromptRequest(target.original.text, code, blanked)))

    # 3. Render prompts in parts that decoding computes once per group, once per
    #    original and once per prompt; budget the answers by what was blanked.
    prompts = [strategy.split(request) for _, request in requests]
    budgets = answer_budgets(lm.tokenizer, [request for _, request in requests], settings.decoding)

    # 4. Decode everything in length-sorted batches.
    continuations = generate_continuations(
        lm,
        prompts,
        budgets,
        settings.decoding,
        answers_needed=[strategy.answers_needed(request) for _, request in requests],
        stop_at_newline=strategy.stops_at_newline,
        progress=progress,
    )

    # 5. Parse answers strictly; malformed continuations are counted and dropped.
    run = PolyjuiceRun(candidates=[], prompts=len(prompts))
    for (target, request), outputs in zip(requests, continuations, strict=True):
        for continuation in outputs:
            run.continuations += 1
            text = strategy.parse(request, continuation)
            if text is None:
                run.malformed += 1
                continue
            run.candidates.append(
                CandidateRecord(
                    original_key=target.original.key,
                    text=text,
                    generator=GENERATOR_NAME,
                    control_code=request.code,
                    prompt=request.blanked,
                    metadata={"strategy": strategy.name},
                )
            )
    return run
