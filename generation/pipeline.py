"""The generation pipeline end to end: load models, generate, dedupe, annotate, filter.

This is the one entry point the web app calls (through its adapter), and what the
command line and the benchmark run.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from generation.engines import Engine, make_engine
from generation.models import DEFAULT_MODEL, load_cached
from generation.parsing import ParseCache
from generation.polyjuice import PerturbTarget, PolyjuiceSettings, polyjuice_generate
from generation.postprocess import (
    AnnotatedCandidate,
    Annotator,
    PostprocessResult,
    PostprocessStats,
    annotate,
)
from generation.records import OriginalRecord


@dataclass(frozen=True)
class PipelineSettings:
    model: str | None = None  # generator: hub id, local directory, or the default
    fluency_model: str | None = None  # a plain LM for the filter; default: the packaged model
    device: str = "auto"
    dtype: str = "auto"
    fluency_threshold: float | None = 10.0  # None turns the filter off
    fluency_batch_size: int = 64
    sanity: bool = True  # drop broken candidates (generation.sanity); False keeps them
    polyjuice: PolyjuiceSettings = field(default_factory=PolyjuiceSettings)


@dataclass
class PipelineResult:
    originals: list[OriginalRecord]
    candidates: list[AnnotatedCandidate]
    stats: PostprocessStats
    prompts: int = 0
    malformed: int = 0
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def kept(self) -> list[AnnotatedCandidate]:
        return [candidate for candidate in self.candidates if candidate.kept]


class _Progress:
    """A tqdm bar on stderr when asked for; silent otherwise."""

    def __init__(self, enabled: bool, total: int, description: str, unit: str) -> None:
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=description, unit=unit, leave=False)

    def update(self, count: int) -> None:
        if self.bar is not None:
            self.bar.update(count)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _chained(*hooks: Callable[[int], None] | None) -> Callable[[int], None]:
    """One progress hook that calls each of `hooks` given (None: skipped)."""
    given = [hook for hook in hooks if hook is not None]

    def advance(count: int) -> None:
        for hook in given:
            hook(count)

    return advance


def _annotate_parts(processed: PostprocessResult) -> dict[str, float]:
    """The annotation's own timings, as `annotate:<part>` seconds."""
    return {f"annotate:{part}": value for part, value in processed.seconds.items()}


def run_polyjuice(
    targets: list[PerturbTarget],
    settings: PipelineSettings,
    *,
    lm=None,
    engine: Engine | None = None,
    fluency_lm=None,
    parses: ParseCache | None = None,
    show_progress: bool = False,
) -> PipelineResult:
    """Generate, dedupe, annotate and filter counterfactuals for every target.

    Decoding runs on `engine` if given, else on the engine the settings name, over
    `lm` or the settings' model.
    """
    seconds: dict[str, float] = {}
    started = time.perf_counter()

    # 1. Models and parser, each loaded once per process (an inference server needs
    #    no generator model here).
    if engine is None and settings.polyjuice.engine == "server":
        engine = make_engine("server", server=settings.polyjuice.server)
    if engine is None:
        lm = lm or load_cached(
            settings.model or DEFAULT_MODEL, device=settings.device, dtype=settings.dtype
        )
        engine = make_engine(settings.polyjuice.engine, lm=lm)
    if fluency_lm is None and settings.fluency_threshold is not None:
        fluency_lm = load_cached(
            settings.fluency_model or DEFAULT_MODEL, device=settings.device, dtype=settings.dtype
        )
    parses = parses if parses is not None else ParseCache()
    seconds["load"] = time.perf_counter() - started

    # 2. Raw candidates from one batched decoding pass.
    mark = time.perf_counter()
    progress = _Progress(show_progress, total=0, description="generating", unit="prompt")
    if progress.bar is not None:
        progress.bar.total = None
    # Parsing, edits, codes and relationships start in worker processes as soon as
    # each prompt's candidates are parsed, while decoding goes on.
    annotator = Annotator(
        {target.original.key: target.original for target in targets},
        parses=parses,
        fluency_lm=fluency_lm if settings.fluency_threshold is not None else None,
        threshold=settings.fluency_threshold or 0.0,
        batch_size=settings.fluency_batch_size,
        sanity=settings.sanity,
    )
    run = polyjuice_generate(
        targets,
        settings.polyjuice,
        engine=engine,
        parses=parses,
        progress=progress.update,
        on_candidates=annotator.add,
        on_decoding=annotator.expect,
    )
    progress.close()
    seconds["generate"] = time.perf_counter() - mark

    # 3. Dedupe, then wait for the annotation and run the fluency filter.
    mark = time.perf_counter()
    processed = annotator.finish(run.candidates)
    seconds["annotate"] = time.perf_counter() - mark
    seconds.update(_annotate_parts(processed))
    seconds["total"] = time.perf_counter() - started
    return PipelineResult(
        originals=[target.original for target in targets],
        candidates=processed.candidates,
        stats=processed.stats,
        prompts=run.prompts,
        malformed=run.malformed,
        seconds=seconds,
    )


def perturb_texts(
    texts: list[str],
    settings: PipelineSettings,
    *,
    blanked: tuple[str, ...] = (),
    show_progress: bool = False,
    **kwargs,
) -> PipelineResult:
    """Counterfactuals of plain sentences (no labels), as the command line asks for them."""
    targets = [
        PerturbTarget(
            original=OriginalRecord(key=f"x{index}", text=text, label=""), blanked=blanked
        )
        for index, text in enumerate(texts, start=1)
    ]
    return run_polyjuice(targets, settings, show_progress=show_progress, **kwargs)


def run_generator(
    generator,
    originals: list[OriginalRecord],
    settings: PipelineSettings,
    *,
    fluency_lm=None,
    context=None,
    show_progress: bool = False,
    on_progress: Callable[[int], None] | None = None,
) -> tuple[PipelineResult, list]:
    """Any registered generator, then the same dedupe, edits, codes and fluency filter.

    `on_progress` is called, as the generator goes, with the number of originals it has
    just finished (the web app's live progress); `show_progress` draws a bar on stderr.
    Returns the result and the generator's `Skipped` entries (originals it could not
    perturb, each with its reason).
    """
    from generation.generators import GenerationContext

    seconds: dict[str, float] = {}
    started = time.perf_counter()
    # Generators report originals done (`GenerationContext.progress`), not prompts.
    progress = _Progress(
        show_progress, total=len(originals), description=generator.name, unit="original"
    )
    context = context or GenerationContext(device=settings.device, dtype=settings.dtype)
    context.progress = _chained(progress.update, on_progress)
    output = generator.generate(originals, context=context)
    progress.close()
    seconds["generate"] = time.perf_counter() - started

    mark = time.perf_counter()
    if fluency_lm is None and settings.fluency_threshold is not None and output.candidates:
        fluency_lm = load_cached(
            settings.fluency_model or DEFAULT_MODEL, device=settings.device, dtype=settings.dtype
        )
    processed = annotate(
        output.candidates,
        {original.key: original for original in originals},
        parses=context.parses,
        fluency_lm=fluency_lm if settings.fluency_threshold is not None else None,
        threshold=settings.fluency_threshold or 0.0,
        batch_size=settings.fluency_batch_size,
        sanity=settings.sanity,
        workers=None,  # a pool: generation runs in a worker process or the CLI
    )
    seconds["annotate"] = time.perf_counter() - mark
    seconds.update(_annotate_parts(processed))
    seconds["total"] = time.perf_counter() - started
    result = PipelineResult(
        originals=list(originals),
        candidates=processed.candidates,
        stats=processed.stats,
        seconds=seconds,
    )
    return result, output.skipped
