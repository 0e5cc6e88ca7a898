"""The Polyjuice generator: blanks from the parse, a prompt per (code, blank set), batched decoding.

It returns raw candidates; `generation.postprocess` dedupes them and adds edits,
control codes, relationships and fluency, the same way for every generator.
"""

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from generation.blanks import blanked_text, count_blanks, random_blank_sets, targeted_blank_sets
from generation.constraints import special_token_texts
from generation.control_codes import detect_code
from generation.decoding import DecodingConfig, PromptParts
from generation.engines import ENGINE_NAMES, Engine, ServerConfig, make_engine
from generation.label_directed import (
    LabelDirectedStrategy,
    LabelExample,
    examples_for,
    first_blank_only,
    tail_blank,
    target_labels,
    with_codes,
)
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
    engine: str = "auto"  # generation.engines: auto | loop | continuous | server
    server: ServerConfig | None = None  # where engine "server" sends its requests
    # Label-directed prompts (generation.label_directed): with the task's labels, a model
    # prompted few-shot is asked for the smallest edit that makes each other label;
    # models trained on the Polyjuice format keep their own prompts.
    label_choices: tuple[str, ...] = ()
    label_directed: bool = True
    label_examples: tuple[LabelExample, ...] = ()  # the campaign's own pairs, if any

    def __post_init__(self) -> None:
        if self.engine not in ENGINE_NAMES:
            raise ValueError(
                f"Unknown engine {self.engine!r}; choose from {', '.join(ENGINE_NAMES)}."
            )
        if self.engine == "server" and self.server is None:
            raise ValueError("The server engine needs server settings (URL and model name).")
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


def _label_strategy(
    settings: PolyjuiceSettings, strategy, parses: ParseCache
) -> LabelDirectedStrategy | None:
    """The label-directed strategy when the settings ask for it and the model is prompted
    few-shot (a model trained on the Polyjuice format knows no label prompt); else None."""
    if not (settings.label_directed and len(set(settings.label_choices)) >= 2):
        return None
    if strategy.name != "fewshot":
        return None
    examples = examples_for(settings.label_choices, settings.label_examples)
    return LabelDirectedStrategy(with_codes(examples, _code_detector(parses)))


def _code_detector(parses: ParseCache):
    def code_of(source: str, target: str) -> str:
        code = detect_code(parses.parse(source), parses.parse(target))
        return code if code in CONTROL_CODES else ""

    return code_of


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


def _label_blanks(original: str, blanks: list[str], *, targeted: bool) -> list[str]:
    """Label-directed blanks: a random blank set becomes a rewrite from its first blank on
    (`tail_blank`); a targeted one keeps its first blank, for one quoted replacement."""
    if targeted:
        return list(dict.fromkeys(first_blank_only(original, blanked) for blanked in blanks))
    chosen = [
        BLANK if blanked.strip() == BLANK else tail_blank(original, blanked) for blanked in blanks
    ]
    return list(dict.fromkeys(blanked for blanked in chosen if blanked))


def _prompt_requests(
    targets: list[PerturbTarget],
    settings: PolyjuiceSettings,
    parses: ParseCache,
    rng: random.Random,
    *,
    labelled: bool,
) -> list[tuple[PerturbTarget, PromptRequest]]:
    """One request per (original, code, blanked text). Label-directed, an original's
    prompts take its target labels in turn, one replacement each."""
    requests: list[tuple[PerturbTarget, PromptRequest]] = []
    for target in targets:
        codes = target.codes or settings.codes
        original = target.original
        aims = target_labels(original.label, settings.label_choices) if labelled else []
        blanks = _blanked_texts(target, parses, settings, rng)
        if aims:
            targeted = bool(target.blanked or target.spans)
            blanks = _label_blanks(original.text, blanks, targeted=targeted)
        for blanked in blanks:
            for code in codes:
                request = PromptRequest(original.text, code, blanked)
                if aims:
                    aim = aims[len(requests) % len(aims)]
                    request = PromptRequest(
                        original.text, code, blanked, original.label, aim, original.context
                    )
                requests.append((target, request))
    return requests


class _Answers:
    """Each prompt's continuations parsed strictly as the engine finishes it (malformed
    ones counted and dropped), handed on at once, kept in prompt order."""

    def __init__(self, requests, strategies, *, specials, provenance, on_candidates, progress):
        self.requests, self.strategies = requests, strategies
        self.specials, self.provenance = specials, provenance
        self.on_candidates, self.progress = on_candidates, progress
        self.parsed: list[list[CandidateRecord]] = [[] for _ in requests]
        self.done = [False] * len(requests)
        self.continuations = self.malformed = 0

    def finished(self, index: int, outputs: list[str]) -> None:
        if self.done[index]:
            return
        self.done[index] = True
        target, request = self.requests[index]
        way = self.strategies[index]
        for continuation in outputs:
            self.continuations += 1
            text = way.parse(request, continuation, self.specials)
            if text is None:
                self.malformed += 1
                continue
            self.parsed[index].append(
                CandidateRecord(
                    original_key=target.original.key,
                    text=text,
                    generator=GENERATOR_NAME,
                    control_code=request.code,
                    intended_label=request.target_label or None,
                    prompt=request.blanked,
                    metadata={"strategy": way.name, **self.provenance},
                )
            )
        if self.on_candidates and self.parsed[index]:
            self.on_candidates(self.parsed[index])
        if self.progress:
            self.progress(1)

    def run(self) -> "PolyjuiceRun":
        run = PolyjuiceRun(candidates=[], prompts=len(self.requests))
        run.continuations, run.malformed = self.continuations, self.malformed
        run.candidates = [record for records in self.parsed for record in records]
        return run


@dataclass(frozen=True)
class PromptPlan:
    """What one run decodes: a request per (original, code, blanked text), the strategy
    that renders and parses each, its prompt in parts and its budget of new tokens."""

    strategy: object  # the model's own way of prompting (generation.strategies)
    requests: list[tuple[PerturbTarget, PromptRequest]]
    strategies: list  # per request: the label-directed strategy or `strategy`
    prompts: list[PromptParts]
    budgets: list[int]


def plan_prompts(
    targets: list[PerturbTarget],
    settings: PolyjuiceSettings,
    parses: ParseCache,
    tokenizer,
    model_name: str,
) -> PromptPlan:
    """The prompts `polyjuice_generate` decodes for `targets`, before any decoding (the
    benchmark's plain `generate()` ceiling decodes the very same ones)."""
    strategy = strategy_for(settings.strategy, tokenizer, model_name)
    rng = random.Random(settings.seed)
    labelled = _label_strategy(settings, strategy, parses)

    # 1. Parse every original once, in one spaCy batch.
    parses.parse_many(target.original.text for target in targets)

    # 2. One request per (original, code, blanked text).
    requests = _prompt_requests(targets, settings, parses, rng, labelled=labelled is not None)

    # 3. Render prompts in parts that decoding computes once per group, once per
    #    original and once per prompt; budget the answers by what was blanked.
    strategies = [
        labelled if labelled and request.target_label else strategy for _, request in requests
    ]
    prompts = [way.split(request) for way, (_, request) in zip(strategies, requests, strict=True)]
    budgets = answer_budgets(tokenizer, [request for _, request in requests], settings.decoding)
    return PromptPlan(strategy, requests, strategies, prompts, budgets)


def polyjuice_generate(
    targets: list[PerturbTarget],
    settings: PolyjuiceSettings,
    *,
    lm=None,
    engine: Engine | None = None,
    parses: ParseCache,
    progress: Callable[[int], None] | None = None,
    on_candidates: Callable[[list[CandidateRecord]], None] | None = None,
    on_decoding: Callable[[int], None] | None = None,
) -> PolyjuiceRun:
    """Raw candidates for every target, from one batched decoding pass over all prompts.

    Decoding runs on `engine`, or on the engine the settings name over `lm`.
    `on_candidates` receives each prompt's parsed candidates as soon as the engine
    finishes that prompt (for annotation that overlaps decoding); the returned run
    holds them all in prompt order. `on_decoding` receives the number of continuations
    about to be decoded, before decoding starts.
    """
    engine = engine or make_engine(settings.engine, lm=lm, server=settings.server)
    # 1.-3. The prompts and their budgets.
    plan = plan_prompts(targets, settings, parses, engine.tokenizer, str(engine.model_name))

    # 4. Decode everything; 5. parse each prompt's answers strictly as it completes
    #    (malformed continuations are counted and dropped).
    answers = _Answers(
        plan.requests,
        plan.strategies,
        specials=special_token_texts(engine.tokenizer),
        provenance={"engine": engine.name, "model": engine.model_name},
        on_candidates=on_candidates,
        progress=progress,
    )
    if on_decoding:
        on_decoding(len(plan.prompts) * settings.decoding.per_prompt)
    outputs = engine.generate(
        plan.prompts,
        plan.budgets,
        settings.decoding,
        answers_needed=[
            way.answers_needed(request)
            for way, (_, request) in zip(plan.strategies, plan.requests, strict=True)
        ],
        stop_at_newline=plan.strategy.stops_at_newline,
        on_result=answers.finished,
    )
    for index, continuations in enumerate(outputs):
        answers.finished(index, continuations)  # a no-op for prompts already reported
    return answers.run()
