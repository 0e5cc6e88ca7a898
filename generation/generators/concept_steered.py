"""Concept-steered counterfactuals: x's concepts kept by constrained decoding, the label steered.

NeuroCounterfactuals (Howard et al. 2022, seed 001): §2.1 extracts the concepts of x,
§2.2 steers the LM toward the opposite label, §2.3 decodes with NeuroLogic so that every
concept appears, from a prompt that is x's first token (1g) or its longest neutral prefix
(np; §3.1). Differences from the paper, and why, are in `generation/neurologic.md`.
"""

import importlib
import string
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from spacy.tokens import Doc, Span

from generation.decoding import newline_token_ids
from generation.generators.base import (
    DEFAULT_MAX_TOKENS,
    GenerationContext,
    GeneratorOptionsError,
    GeneratorOutput,
    Skipped,
    candidate,
    input_problem,
)
from generation.generators.lexicon.opinion_lexicon import opinion_lexicon
from generation.models import DEFAULT_MODEL, LoadedModel, load_cached
from generation.neurologic import (
    CausalLMScorer,
    Clause,
    Hypothesis,
    NeuroLogicConfig,
    SearchRequest,
    constrained_beam_search,
)
from generation.records import OriginalRecord

PROMPT_VARIANTS = ("1g", "np", "plain")
NEUTRAL_JUDGES = ("vader",)
TEMPLATE_FIELDS = {"label", "concepts", "context"}
DEFAULT_TEMPLATE = "Write a {label} sentence that mentions {concepts}.\nSentence:"
# VADER's own convention: a compound score inside (-0.05, 0.05) is neutral.
VADER_NEUTRAL_BAND = 0.05
_NOUNS = ("NOUN", "PROPN")


@dataclass(frozen=True)
class Concept:
    """A content-bearing noun phrase of x that the counterfactual must keep (§2.1)."""

    text: str  # as written in x, e.g. "plot devices"
    start: int  # token span in x's parse
    end: int
    forms: tuple[str, ...]  # surface forms that satisfy its clause: inflections, case variants


def pluralize(noun: str) -> str:
    """English plural by the regular rules; irregular nouns get a harmless extra form."""
    lower = noun.lower()
    if lower.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if len(lower) > 1 and lower.endswith("y") and lower[-2] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def surface_forms(span: Span) -> tuple[str, ...]:
    """The concept as written, its head noun singular and plural, each lowercase and Capitalized."""
    head = span[-1]
    modifiers = span[:-1].text_with_ws if len(span) > 1 else ""
    heads = [head.text]
    if head.pos_ == "NOUN":  # proper nouns keep their one form
        other = head.lemma_ if head.tag_ == "NNS" else pluralize(head.text)
        if other and other.isalpha():
            heads.append(other)
    forms = []
    for phrase in (modifiers + word for word in heads):
        forms += [phrase, phrase.lower(), phrase[:1].upper() + phrase[1:]]
    return tuple(dict.fromkeys(forms))


def noun_chunk_spans(doc: Doc) -> list[Span]:
    """Each noun chunk cut to its head noun and the nouns compounded onto it, opinion
    words left out.

    "a loose collection" gives "collection" and "the source material" gives "source
    material": the content words, not the determiners or the (often sentiment-bearing)
    adjectives, which the paper's ConceptNet linking leaves out too (§2.1). Nouns can
    carry the sentiment as well ("a disaster", "a waste of a good cast", and "superb",
    which the parser sometimes takes for a noun): a concept must appear in the
    counterfactual, so a sentiment word made a concept would keep x's label. A chunk
    whose head is an opinion word (the lexicon generators' VADER list) gives no concept,
    and compounding stops at one ("love story" gives "story").
    """
    spans = []
    for chunk in doc.noun_chunks:
        root = chunk.root
        if root.pos_ not in _NOUNS or _is_opinion_word(root):  # pronouns evoke no concept
            continue
        start = root.i
        while (
            start > chunk.start
            and doc[start - 1].pos_ in _NOUNS
            and not _is_opinion_word(doc[start - 1])
        ):
            start -= 1
        spans.append(doc[start : root.i + 1])
    return spans


def _is_opinion_word(token) -> bool:
    return (
        opinion_lexicon().form_polarity(token.lower_, token.tag_, token.lemma_.lower()) is not None
    )


def extract_concepts(spans: Iterable[Span], max_concepts: int) -> list[Concept]:
    """Distinct concepts in order of appearance, at most `max_concepts`."""
    concepts, seen = [], set()
    for span in spans:
        if not any(token.is_alpha for token in span):
            continue
        key = " ".join(token.lemma_.lower() for token in span)
        if key in seen:
            continue
        seen.add(key)
        concepts.append(Concept(span.text, span.start, span.end, surface_forms(span)))
        if len(concepts) == max_concepts:
            break
    return concepts


def concept_clause(tokenizer, concept: Concept) -> Clause:
    """The clause "one of the concept's forms appears", as token sequences.

    Forms are tokenized after a space, as a word inside a sentence is written.
    """
    literals = tuple(
        dict.fromkeys(
            tuple(tokenizer(" " + form, add_special_tokens=False)["input_ids"])
            for form in concept.forms
        )
    )
    return Clause(literals=literals, label=concept.text)


def neutral_prefix(
    doc: Doc, concepts: Sequence[Concept], is_neutral: Callable[[str], bool], min_tokens: int
) -> str | None:
    """The longest neutral prefix of x (§3.1), or None (Table 9's cases).

    Candidates have at least `min_tokens` tokens and leave at least one concept in the
    rest of x; the longest one the judge calls neutral wins.
    """
    last_start = max((concept.start for concept in concepts), default=0)
    for end in range(last_start, min_tokens - 1, -1):
        prefix = doc[:end].text
        if is_neutral(prefix):
            return prefix
    return None


def vader_neutral_judge() -> Callable[[str], bool]:
    """Neutral when VADER's compound sentiment is inside its neutral band."""
    try:
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer
    except ImportError:
        raise GeneratorOptionsError(
            "prompt_variant 'np' judges prefixes with VADER: pip install vaderSentiment"
        ) from None
    analyzer = SentimentIntensityAnalyzer()
    return lambda text: abs(analyzer.polarity_scores(text)["compound"]) < VADER_NEUTRAL_BAND


def load_concept_linker(path: str) -> Callable[[Doc], Iterable[Span]]:
    """The optional concept hook "module:function" (e.g. a ConceptNet linker like COCO-EX).

    It takes x's parse and returns the spans that evoke concepts, in place of noun chunks.
    """
    module_name, _, attribute = path.partition(":")
    try:
        linker = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError, ValueError) as error:
        raise GeneratorOptionsError(f"concept_linker {path!r} cannot be loaded: {error}") from None
    if not callable(linker):
        raise GeneratorOptionsError(f"concept_linker {path!r} is not callable")
    return linker


def target_labels(label: str, label_map: dict[str, str], label_choices: Sequence[str]) -> list[str]:
    """The labels to steer toward: the mapped one, else every other label of the campaign."""
    if label in label_map:
        return [label_map[label]]
    return [choice for choice in dict.fromkeys(label_choices) if choice != label]


def join_concepts(concepts: Sequence[Concept]) -> str:
    texts = [f'"{concept.text}"' for concept in concepts]
    return texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " and " + texts[-1]


@dataclass(frozen=True)
class _Prepared:
    """An original that can be perturbed: its concepts, target labels and output opening."""

    original: OriginalRecord
    concepts: tuple[Concept, ...]
    targets: tuple[str, ...]
    prefix: str  # "" for the plain variant


@dataclass(frozen=True)
class _Planned:
    """One search to run: an original, the label it steers toward, what it must contain."""

    original: OriginalRecord
    target: str
    concepts: tuple[Concept, ...]
    prompt: str
    prefix: str
    request: SearchRequest


class ConceptSteered:
    """NeuroCounterfactuals with any causal LM: a steering prompt instead of a fine-tuned steer."""

    name: ClassVar[str] = "concept-steered"

    @dataclass(frozen=True)
    class Settings:
        model: str | None = None  # HF id or directory; None = the packaged default
        # What opens the output (§2.3): x's first word ("1g"), x's longest neutral prefix
        # ("np", the tighter counterfactuals of Table 4), or nothing ("plain").
        prompt_variant: str = "np"
        label_map: dict[str, str] = field(default_factory=dict)  # original label -> target
        label_choices: tuple[str, ...] = ()  # the campaign's labels; targets are the others
        label_descriptions: dict[str, str] = field(default_factory=dict)  # label -> prompt words
        prompt_template: str = DEFAULT_TEMPLATE  # may use {label}, {concepts}, {context}
        max_concepts: int = 6  # one clause each; more make satisfying all of them harder
        concept_linker: str | None = None  # "module:function" ConceptNet hook; off by default
        neutral_judge: str = "vader"  # classifies np prefixes (the paper used a 5-way model)
        min_prefix_tokens: int = 4  # §3.1: np prompts have at least 4 tokens
        # NeuroLogic, with the paper's values (§3.1).
        beam_size: int = 20
        length_penalty: float = 0.3
        no_repeat_ngram_size: int = 2
        beta: float = 1.25  # reward for in-progress constraint satisfaction
        sat_tolerance: int = 2  # constraint satisfaction tolerance
        prune_factor: int = 500  # constraint tokens must rank this high in the LM's view
        num_return: int = 3  # counterfactuals per original and target label
        batch_size: int = 8  # searches decoded side by side
        # Budget: loose counterfactuals may run longer than x, but not without end.
        max_new_tokens_factor: float = 1.5
        max_new_tokens_extra: int = 8
        max_new_tokens_cap: int = 96
        max_tokens: int = DEFAULT_MAX_TOKENS  # longer originals are skipped

        def __post_init__(self) -> None:
            if self.prompt_variant not in PROMPT_VARIANTS:
                raise ValueError(f"prompt_variant must be one of {', '.join(PROMPT_VARIANTS)}")
            if self.neutral_judge not in NEUTRAL_JUDGES:
                raise ValueError(f"neutral_judge must be one of {', '.join(NEUTRAL_JUDGES)}")
            for name in ("label_map", "label_descriptions"):
                mapping = getattr(self, name)
                if not isinstance(mapping, dict) or not all(
                    isinstance(key, str) and isinstance(value, str)
                    for key, value in mapping.items()
                ):
                    raise ValueError(f"{name} must map labels (text) to text")
            fields = {name for _, name, _, _ in string.Formatter().parse(self.prompt_template)}
            unknown = fields - TEMPLATE_FIELDS - {None}
            if unknown:
                raise ValueError(
                    f"prompt_template may use {{label}}, {{concepts}} and {{context}}, "
                    f"not {', '.join(sorted(map(str, unknown)))}"
                )
            if self.max_concepts < 1 or self.min_prefix_tokens < 1 or self.max_tokens < 1:
                raise ValueError("max_concepts, min_prefix_tokens and max_tokens must be >= 1")
            if self.max_new_tokens_cap < 1 or self.max_new_tokens_factor < 0:
                raise ValueError("the new-token budget must allow at least one token")
            self.search_config()  # its own checks: beam, tolerance, prune factor

        def search_config(self) -> NeuroLogicConfig:
            return NeuroLogicConfig(
                beam_size=self.beam_size,
                length_penalty=self.length_penalty,
                no_repeat_ngram_size=self.no_repeat_ngram_size,
                beta=self.beta,
                sat_tolerance=self.sat_tolerance,
                prune_factor=self.prune_factor,
                num_return=self.num_return,
                batch_size=self.batch_size,
            )

    def __init__(self, settings: "ConceptSteered.Settings | None" = None) -> None:
        self.settings = settings or self.Settings()
        self.linker = (
            load_concept_linker(self.settings.concept_linker)
            if self.settings.concept_linker
            else None
        )
        self.is_neutral = vader_neutral_judge() if self.settings.prompt_variant == "np" else None

    def generate(
        self, originals: Sequence[OriginalRecord], *, context: GenerationContext
    ) -> GeneratorOutput:
        output = GeneratorOutput()
        context.parses.parse_many([original.text for original in originals if original.text])

        # 1. Concepts, target labels and the output's opening; the rest is skipped with a reason.
        prepared: list[_Prepared] = []
        for original in originals:
            ready = self._prepare(original, context)
            if isinstance(ready, str):
                output.skipped.append(Skipped(original.key, ready))
                context.advance(1)
            else:
                prepared.append(ready)
        if not prepared:
            return output  # nothing to decode: no model is loaded

        # 2. The LM, loaded once per process.
        settings = self.settings
        lm = context.lm or load_cached(
            settings.model or DEFAULT_MODEL, device=context.device, dtype=context.dtype
        )

        for start in range(0, len(prepared), settings.batch_size):
            chunk = prepared[start : start + settings.batch_size]
            # 3. One constrained search per (original, target label), decoded side by side.
            plans = [plan for ready in chunk for plan in self._plans(ready, lm)]
            results = self._search(lm, plans) if plans else []
            # 4. Candidates; an original none of whose searches finished is skipped.
            produced: set[str] = set()
            for plan, hypotheses in zip(plans, results, strict=True):
                for rank, hypothesis in enumerate(hypotheses):
                    text = self._text(lm, hypothesis)
                    if text:
                        output.candidates.append(self._candidate(plan, hypothesis, text, rank))
                        produced.add(plan.original.key)
            planned = {plan.original.key for plan in plans}
            for ready in chunk:
                key = ready.original.key
                if key not in planned:
                    reason = (
                        f"the prompt leaves no room in the model's {_context_length(lm)} tokens"
                    )
                    output.skipped.append(Skipped(key, reason))
                elif key not in produced:
                    budget = max(p.request.max_new_tokens for p in plans if p.original.key == key)
                    reason = f"no output held every concept and ended within {budget} tokens"
                    output.skipped.append(Skipped(key, reason))
                context.advance(1)
        return output

    # -- planning ---------------------------------------------------------------------------

    def _prepare(self, original: OriginalRecord, context: GenerationContext) -> "_Prepared | str":
        """What to decode for an original, or why it cannot be perturbed."""
        settings = self.settings
        doc = context.parses.parse(original.text) if original.text.strip() else None
        problem = input_problem(original.text, doc, max_tokens=settings.max_tokens)
        if problem:
            return problem
        concepts = self._concepts(doc)
        if not concepts:
            return "no noun chunk to keep as a concept"
        targets = target_labels(original.label, settings.label_map, settings.label_choices)
        if not targets:
            return (
                f"no target label for {original.label!r}: set label_map, or label_choices "
                "to the campaign's labels"
            )
        prefix = self._prefix(doc, concepts)
        if prefix is None:
            return (
                f"no neutral prefix of at least {settings.min_prefix_tokens} tokens "
                "followed by a concept"
            )
        return _Prepared(original, tuple(concepts), tuple(targets), prefix)

    def _concepts(self, doc: Doc) -> list[Concept]:
        spans = self.linker(doc) if self.linker else noun_chunk_spans(doc)
        return extract_concepts(spans, self.settings.max_concepts)

    def _prefix(self, doc: Doc, concepts: Sequence[Concept]) -> str | None:
        variant = self.settings.prompt_variant
        if variant == "plain":
            return ""
        if variant == "1g":
            return doc[0].text
        return neutral_prefix(doc, concepts, self.is_neutral, self.settings.min_prefix_tokens)

    def _budget(self, lm: LoadedModel, original: OriginalRecord) -> int:
        settings = self.settings
        x_tokens = len(lm.tokenizer(" " + original.text, add_special_tokens=False)["input_ids"])
        wanted = int(settings.max_new_tokens_factor * x_tokens) + settings.max_new_tokens_extra
        return max(1, min(settings.max_new_tokens_cap, wanted))

    def _plans(self, ready: "_Prepared", lm: LoadedModel) -> list[_Planned]:
        """One search per target label; none where the prompt leaves no room in the context."""
        settings, tokenizer = self.settings, lm.tokenizer
        clauses = tuple(concept_clause(tokenizer, concept) for concept in ready.concepts)
        prefix_ids = (
            tuple(tokenizer(" " + ready.prefix, add_special_tokens=False)["input_ids"])
            if ready.prefix
            else ()
        )
        plans = []
        for target in ready.targets:
            prompt = settings.prompt_template.format(
                label=settings.label_descriptions.get(target, _describe(target)),
                concepts=join_concepts(ready.concepts),
                context=ready.original.context,
            )
            # The tokenizer adds what its model expects first (Llama's <s>; nothing for GPT-2).
            prompt_ids = tuple(tokenizer(prompt)["input_ids"])
            room = _context_length(lm) - len(prompt_ids) - len(prefix_ids)
            budget = min(self._budget(lm, ready.original), room)
            if budget < 1:
                continue
            request = SearchRequest(prompt_ids, prefix_ids, clauses, max_new_tokens=budget)
            plans.append(
                _Planned(ready.original, target, ready.concepts, prompt, ready.prefix, request)
            )
        return plans

    # -- decoding ---------------------------------------------------------------------------

    def _search(self, lm: LoadedModel, plans: list[_Planned]) -> list[list[Hypothesis]]:
        return constrained_beam_search(
            CausalLMScorer(lm.model),
            [plan.request for plan in plans],
            self.settings.search_config(),
            end_ids=_end_ids(lm),
            pad_id=lm.tokenizer.pad_token_id,
            device=lm.device,
        )

    def _text(self, lm: LoadedModel, hypothesis: Hypothesis) -> str:
        # A newline token may carry text before its newline ("."); end-of-text carries none.
        ids = list(hypothesis.token_ids)
        if hypothesis.end_id not in _eos_ids(lm):
            ids.append(hypothesis.end_id)
        text = lm.tokenizer.decode(ids, skip_special_tokens=True)
        return " ".join(text.split("\n", 1)[0].split())

    def _candidate(self, plan: _Planned, hypothesis: Hypothesis, text: str, rank: int):
        return candidate(
            plan.original,
            text,
            generator=self.name,
            edit_type="rewrite",
            intended_label=plan.target,
            prompt=plan.prompt + (" " + plan.prefix if plan.prefix else ""),
            prompt_variant=self.settings.prompt_variant,
            prefix=plan.prefix,
            concepts=[concept.text for concept in plan.concepts],
            concepts_kept=[
                concept.text
                for concept, kept in zip(plan.concepts, hypothesis.satisfied, strict=True)
                if kept
            ],
            beam_rank=rank,
            score=hypothesis.score,
            log_prob=hypothesis.log_prob,
        )


def _describe(label: str) -> str:
    return " ".join(label.replace("_", " ").replace("-", " ").lower().split())


def _context_length(lm: LoadedModel) -> int:
    """Positions the model can attend to (GPT-2 calls it n_positions); unbounded if unknown."""
    config = lm.model.config
    for name in ("max_position_embeddings", "n_positions"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return 1 << 30


def _eos_ids(lm: LoadedModel) -> set[int]:
    ids = {lm.tokenizer.eos_token_id}
    configured = getattr(lm.model.generation_config, "eos_token_id", None)
    ids |= set(configured) if isinstance(configured, list) else {configured}
    return {token for token in ids if token is not None}


def _end_ids(lm: LoadedModel) -> set[int]:
    """Where an output may end: end-of-text, or a newline (the prompt asks for one sentence)."""
    return _eos_ids(lm) | newline_token_ids(lm.tokenizer)
