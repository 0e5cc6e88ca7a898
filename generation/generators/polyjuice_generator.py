"""Polyjuice behind the generator interface, with the same options a campaign gives it."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from generation.decoding import DecodingConfig
from generation.generators.base import GenerationContext, GeneratorOutput, Skipped, input_problem
from generation.models import DEFAULT_MODEL, load_cached
from generation.polyjuice import (
    DEFAULT_CODES,
    GENERATOR_NAME,
    PerturbTarget,
    PolyjuiceSettings,
    polyjuice_generate,
)
from generation.records import OriginalRecord


class PolyjuiceGenerator:
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
            )

        def __post_init__(self) -> None:
            self.polyjuice()  # invalid combinations fail here, before any model loads

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
                problem = input_problem(original.text, context.parses.parse(original.text))
            if problem:
                output.skipped.append(Skipped(original.key, problem))
            else:
                targets.append(PerturbTarget(original=original))
        if targets:
            lm = load_cached(
                self.settings.model or DEFAULT_MODEL, device=context.device, dtype=context.dtype
            )
            run = polyjuice_generate(
                targets, self.settings.polyjuice(), lm=lm, parses=context.parses
            )
            output.candidates.extend(run.candidates)
        context.advance(len(originals))
        return output
