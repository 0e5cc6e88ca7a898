"""Polyjuice behind the generator interface, with the same options a campaign gives it.

With `slices`, only originals that match one of those slicing functions are perturbed,
blanked exactly on what matched (Polyjuice §4.1, `generation.slicing`); the others are
skipped with the reason.
"""

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from generation.decoding import DecodingConfig
from generation.engines import ServerConfig
from generation.generators.base import GenerationContext, GeneratorOutput, Skipped, input_problem
from generation.label_directed import LabelExample
from generation.models import DEFAULT_MODEL, load_cached
from generation.polyjuice import (
    DEFAULT_CODES,
    GENERATOR_NAME,
    PerturbTarget,
    PolyjuiceSettings,
    polyjuice_generate,
)
from generation.records import OriginalRecord
from generation.slicing import get_slice, targets_for_slices
from generation.tokens import CONTROL_CODES


class _OriginalsFromPrompts:
    """Polyjuice reports prompts as they finish; the context counts originals. An original
    asks at most (codes times blank sets) prompts (fewer where blanks coincide), so the count
    runs a little behind while decoding and catches up when it ends."""

    def __init__(self, context: GenerationContext, originals: int, settings) -> None:
        self.context = context
        self.originals = originals
        blanks = settings.random_blank_sets + int(settings.sentence_blank)
        self.per_original = max(1, len(settings.codes) * blanks)
        self.prompts = 0
        self.reported = 0

    def __call__(self, prompts: int) -> None:
        self.prompts += prompts
        done = min(self.originals, self.prompts // self.per_original)
        if done > self.reported:
            self.context.advance(done - self.reported)
            self.reported = done

    def finish(self) -> None:
        if self.reported < self.originals:
            self.context.advance(self.originals - self.reported)
            self.reported = self.originals


class PolyjuiceGenerator:
    """Polyjuice: blanks from the dependency parse, filled by a causal LM under control codes."""

    name: ClassVar[str] = GENERATOR_NAME

    @dataclass(frozen=True)
    class Settings:
        model: str | None = None  # hub id or local directory; default: the packaged model
        codes: tuple[str, ...] = DEFAULT_CODES
        strategy: str = "auto"  # auto | native | fewshot
        blank_sets: int = 3  # random blank sets per original, besides the sentence blank
        max_blanks: int = 3
        sentence_blank: bool = True
        per_prompt: int = 3
        temperature: float = 1.0
        top_p: float = 0.9
        num_beams: int = 1
        batch_size: int = 32
        seed: int = 0
        # Targeting (§4.1): slicing functions whose matches are blanked, and the one code
        # to ask for there (None: each slice's suggested code).
        slices: tuple[str, ...] = ()
        slice_code: str | None = None
        # Decoding engine (generation.engines): auto (continuous batching on CUDA, our
        # loop elsewhere), loop, continuous, or server.
        engine: str = "auto"
        # With engine "server": any OpenAI-compatible endpoint (vLLM, SGLang, TGI,
        # llama.cpp, `transformers serve`). The API key is read from the environment
        # variable that server_api_key_env names; it is never stored.
        server_url: str = ""
        server_model: str = ""
        server_api: str = "auto"  # auto | completions | chat
        server_api_key_env: str = ""
        server_concurrency: int = 16
        server_timeout: float = 60.0
        server_retries: int = 3
        # Label-directed prompts (generation.label_directed): whether to ask for each other
        # label of the task (`GenerationContext.labels`), with worked examples as
        # [x, x's label, edited x, its label] (default: the task's own).
        label_directed: bool = True
        label_examples: tuple[tuple[str, ...], ...] = ()

        def server(self) -> ServerConfig | None:
            """The inference server to generate through, or None for an in-process engine."""
            if self.engine != "server":
                return None
            return ServerConfig(
                base_url=self.server_url,
                model=self.server_model,
                api=self.server_api,
                api_key_env=self.server_api_key_env,
                concurrency=self.server_concurrency,
                timeout=self.server_timeout,
                retries=self.server_retries,
            )

        def polyjuice(self) -> PolyjuiceSettings:
            decoding = DecodingConfig(
                do_sample=self.num_beams <= 1,
                temperature=self.temperature,
                top_p=self.top_p,
                num_beams=self.num_beams,
                per_prompt=self.per_prompt,
                batch_size=self.batch_size,
                seed=self.seed,
            )
            return PolyjuiceSettings(
                codes=self.codes,
                strategy=self.strategy,
                random_blank_sets=self.blank_sets,
                max_blanks=self.max_blanks,
                sentence_blank=self.sentence_blank,
                decoding=decoding,
                seed=self.seed,
                engine=self.engine,
                server=self.server(),
                label_directed=self.label_directed,
                label_examples=tuple(LabelExample(*example) for example in self.label_examples),
            )

        def __post_init__(self) -> None:
            for example in self.label_examples:
                if len(example) != 4 or not all(isinstance(part, str) and part for part in example):
                    raise ValueError(
                        "label_examples: each example is [x, x's label, edited x, its label], "
                        f"four texts; got {list(example)!r}."
                    )
            self.polyjuice()  # invalid combinations fail here, before any model loads
            for name in self.slices:
                get_slice(name)
            if self.engine != "server" and self.server_url:
                raise ValueError(
                    f"server_url is set but engine is {self.engine!r}; "
                    "choose engine 'server' to generate through it."
                )
            if self.slice_code is not None and self.slice_code not in CONTROL_CODES:
                raise ValueError(
                    f"Unknown control code {self.slice_code!r}; "
                    f"choose from {', '.join(CONTROL_CODES)}."
                )

    def __init__(self, settings: "PolyjuiceGenerator.Settings") -> None:
        self.settings = settings

    def generate(
        self, originals: Sequence[OriginalRecord], *, context: GenerationContext
    ) -> GeneratorOutput:
        output = GeneratorOutput()
        targets = []
        for original in originals:
            problem = input_problem(original.text)
            if problem is None:
                doc = context.parses.parse(original.text)
                problem = input_problem(original.text, doc, needs_verb=False)
            if problem:
                output.skipped.append(Skipped(original.key, problem))
            else:
                targets.append(PerturbTarget(original=original))
        if targets and self.settings.slices:
            targets = self._targeted(targets, context, output)
        if targets:
            settings = self.settings.polyjuice()
            settings = dataclasses.replace(
                settings,
                label_choices=context.labels,
                label_examples=settings.label_examples or tuple(context.label_examples),
            )
            lm = None
            if settings.engine != "server":
                lm = context.lm or load_cached(
                    self.settings.model or DEFAULT_MODEL, device=context.device, dtype=context.dtype
                )
            originals_done = _OriginalsFromPrompts(context, len(targets), settings)
            run = polyjuice_generate(
                targets, settings, lm=lm, parses=context.parses, progress=originals_done
            )
            output.candidates.extend(run.candidates)
        if len(targets) < len(originals):  # the skipped ones: done without a prompt
            context.advance(len(originals) - len(targets))
        if targets:
            originals_done.finish()
        return output

    def _targeted(
        self, targets: list[PerturbTarget], context: GenerationContext, output: GeneratorOutput
    ) -> list[PerturbTarget]:
        """The targets that match a slice, blanked on the match; the rest are skipped."""
        sliced = targets_for_slices(
            [target.original for target in targets],
            context.parses,
            self.settings.slices,
            code=self.settings.slice_code,
        )
        matched = {target.original.key for target in sliced}
        for target in targets:
            if target.original.key not in matched:
                reason = f"matches none of the slices {', '.join(self.settings.slices)}"
                output.skipped.append(Skipped(target.original.key, reason))
        return sliced
