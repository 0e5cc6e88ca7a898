"""Writes of candidates: generating them with a campaign's generators and storing them
(a researcher's own file of candidates is read in `imports`)."""

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import F

from cfannotate.campaigns.generator_settings import (
    GeneratorEntry,
    generator_entries,
)
from cfannotate.campaigns.models import Campaign, CampaignStatus, Original
from cfannotate.candidates import adapter
from cfannotate.candidates.models import Candidate, CandidateSource
from cfannotate.candidates.predictions import candidates_predict
from cfannotate.core.exceptions import InvalidInput
from cfannotate.core.text import counted

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GeneratorSummary:
    """What one generator of the campaign made of a batch of originals."""

    name: str
    candidates: int  # distinct candidates, before storing
    kept: int  # of those, passed the fluency filter
    skipped: int  # originals it made nothing for (each with a reason, in the log)
    seconds: float


@dataclass(frozen=True)
class GenerationSummary:
    originals: int
    stored: int  # new Candidate rows
    kept: int  # candidates that passed the fluency filter, stored or already known
    already_known: int  # generated again but already stored for that original
    generators: tuple[GeneratorSummary, ...]
    seconds: dict[str, float]
    # By original id: what a generation chunk records of it (GenerationChunk.outcomes).
    outcomes: dict[str, dict] = field(default_factory=dict)


def candidates_store(
    *,
    campaign: Campaign,
    originals: dict[str, Original],
    results,
    source: str = CandidateSource.GENERATED,
) -> int:
    """Insert annotated results, skipping texts the original already has. Returns rows added.

    An intended label the campaign does not have is refused before anything is written.
    """
    labels = adapter.intended_labels(campaign, results)
    rows = [
        adapter.candidate_row(campaign, originals, result, labels, source=source)
        for result in results
    ]
    # Counted on these originals only: other chunks of the run write beside this one.
    mine = Candidate.objects.filter(original__in=list(originals.values()))
    with transaction.atomic():
        before = mine.count()
        # The unique (original, md5(text)) constraint makes re-runs idempotent.
        Candidate.objects.bulk_create(rows, batch_size=500, ignore_conflicts=True)
        return mine.count() - before


def candidates_generate(
    *,
    campaign: Campaign,
    originals: list[Original] | None = None,
    device: str = "auto",
    show_progress: bool = False,
    lm=None,
    fluency_lm=None,
    on_progress: Callable[[int], None] | None = None,
) -> GenerationSummary:
    """Run every generator of the campaign on `originals` (default: all of its own), store.

    The generators run one after another on one shared parse cache; each one's output
    goes through the same dedupe, edits, control code, relationship and fluency filter.
    All candidates are stored together at the end: a batch that fails stores nothing, a
    batch run twice nothing twice. Runs in the calling process (a run's chunk, the demo).
    `lm` / `fluency_lm` replace the models the settings name (tests, benchmarks);
    `on_progress` gets the originals' worth done so far (`_OriginalsDone`).
    """
    from generation.generators import GenerationContext
    from generation.parsing import ParseCache
    from generation.pipeline import run_generator

    entries = generator_entries(campaign)
    originals = list(
        originals
        if originals is not None
        else campaign.originals.select_related("label").order_by("id")
    )
    if not originals:
        raise InvalidInput("The campaign has no originals to perturb.")
    by_key = {str(original.pk): original for original in originals}
    records = adapter.original_records(originals)
    started = time.perf_counter()
    results, summaries = [], []
    outcomes = {key: {"made": 0, "skipped": []} for key in by_key}
    done = _OriginalsDone(originals=len(originals), generators=len(entries), report=on_progress)
    context = GenerationContext(
        parses=ParseCache(),
        device=device,
        lm=lm,
        labels=tuple(campaign.labels.values_list("value", flat=True)),
        label_examples=_label_examples(campaign),
    )
    for position, entry in enumerate(entries):
        result, skipped = run_generator(
            _generator_loaded(entry),
            records,
            adapter.pipeline_settings(campaign, entry, device=device),
            fluency_lm=fluency_lm,
            context=context,
            show_progress=show_progress,
            on_progress=done.advance,
        )
        done.generators_finished(position + 1)
        results.extend(result.candidates)
        summaries.append(_outcomes_record(entry, result, skipped, outcomes))
    stored = candidates_store(campaign=campaign, originals=by_key, results=results)
    _predict_labels(campaign, originals)
    if campaign.status == CampaignStatus.DRAFT:
        Campaign.objects.filter(pk=campaign.pk).update(status=CampaignStatus.REVIEW)
    kept = sum(summary.kept for summary in summaries)
    logger.info(
        "campaign %s: %s stored (%d kept) from %s by %s",
        campaign.pk,
        counted(stored, "candidate"),
        kept,
        counted(len(originals), "original"),
        ", ".join(entry.name for entry in entries),
    )
    return GenerationSummary(
        originals=len(originals),
        stored=stored,
        kept=kept,
        already_known=len(results) - stored,
        generators=tuple(summaries),
        seconds={"total": time.perf_counter() - started},
        outcomes=outcomes,
    )


def _generator_loaded(entry: GeneratorEntry):
    """The entry's generator, or InvalidInput under its place in the settings."""
    from generation.generators import GeneratorOptionsError

    try:
        return entry.load()
    except GeneratorOptionsError as error:
        where = f"generators[{entry.position}]"
        raise InvalidInput(
            f"{entry.name} cannot start: {error}", fields={where: [str(error)]}
        ) from None


def _outcomes_record(entry: GeneratorEntry, result, skipped, outcomes: dict) -> GeneratorSummary:
    """Count what one generator made and skipped per original (into `outcomes`); its summary."""
    for item in skipped:
        logger.info("%s skipped original %s: %s", entry.name, item.original_key, item.reason)
        record = {"generator": entry.name, "reason": item.reason}
        if item.not_for_label:
            record["not_for_label"] = True
        outcomes[item.original_key]["skipped"].append(record)
    for candidate in result.candidates:
        outcomes[candidate.record.original_key]["made"] += 1
    return GeneratorSummary(
        name=entry.name,
        candidates=len(result.candidates),
        kept=len(result.kept),
        skipped=len({item.original_key for item in skipped}),
        seconds=result.seconds.get("total", 0.0),
    )


class _OriginalsDone:
    """Originals' worth of generating done across the campaign's generators: one original
    through every generator counts one, a part of the way in proportion."""

    def __init__(
        self, *, originals: int, generators: int, report: Callable[[int], None] | None
    ) -> None:
        self.originals = originals
        self.generators = max(1, generators)
        self.report = report
        self.passes = 0  # one original through one generator
        self.reported = 0

    def advance(self, count: int) -> None:
        self._set(self.passes + count)

    def generators_finished(self, number: int) -> None:
        """Every original has been through the first `number` generators."""
        self._set(number * self.originals)

    def _set(self, passes: int) -> None:
        self.passes = min(passes, self.originals * self.generators)
        done = self.passes // self.generators
        if self.report is not None and done > self.reported:
            self.reported = done
            self.report(done)


def _label_examples(campaign: Campaign, limit: int = 6) -> tuple:
    """The campaign's own counterfactual pairs, as worked examples for label-directed
    prompts: the researcher's imported or authored candidates that aim at a label other
    than their original's (generation.label_directed; the task's examples otherwise). A
    prompt never shows the pair of its own original (`LabelDirectedStrategy.shared`)."""
    from generation.label_directed import LabelExample

    pairs = (
        Candidate.objects.filter(campaign=campaign, intended_label__isnull=False)
        .exclude(source=CandidateSource.GENERATED)
        .exclude(intended_label=F("original__label"))
        .values_list("original__text", "original__label__value", "text", "intended_label__value")
        .order_by("id")[:limit]
    )
    return tuple(LabelExample(*pair) for pair in pairs)


def _predict_labels(campaign: Campaign, originals: list[Original]) -> None:
    """The classifier in the loop on the new candidates of `originals`; a classifier that
    cannot load leaves them unpredicted (selection then weighs diversity alone)."""
    new = Candidate.objects.filter(original__in=originals, prediction_source="").select_related(
        "original"
    )
    try:
        candidates_predict(campaign=campaign, candidates=list(new))
    except InvalidInput as error:
        logger.warning("campaign %s: no predicted labels: %s", campaign.pk, error)
