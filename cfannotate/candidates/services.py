"""Writes of candidates: generating them with a campaign's generators, importing them, storing."""

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import F

from cfannotate.campaigns.generator_settings import (
    GeneratorEntry,
    fluency_model_of,
    generator_entries,
)
from cfannotate.campaigns.models import Campaign, CampaignLabel, CampaignStatus, Original
from cfannotate.candidates import adapter
from cfannotate.candidates.hooks import candidates_ready_send
from cfannotate.candidates.models import Candidate, CandidateSource
from cfannotate.candidates.predictions import candidates_predict
from cfannotate.core.exceptions import InvalidInput
from cfannotate.core.row_report import rows_invalid
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


@dataclass(frozen=True)
class ImportSummary:
    imported: int  # new Candidate rows
    kept: int  # of those, fluent (all of them when fluency was not scored)
    originals: int  # originals they belong to
    units: str = "building"  # labeling units: "building" in the background, or "caller"

    @property
    def message(self) -> str:
        if self.units == "building":
            return (
                "Labeling units are being built in the background (usually seconds). "
                "Labeling can be opened now: workers are served once the units exist."
            )
        return "Labeling units are built by the command that imported them."


def candidates_import(
    *,
    campaign: Campaign,
    file_name: str,
    content: bytes,
    score_fluency: bool = False,
    fluency_lm=None,
    queue_selection: bool = True,
) -> ImportSummary:
    """Import the researcher's own candidates from a CSV or JSONL file: all rows or none.

    Columns: `original_id` (an original's external id), `text`, optionally
    `intended_label`; other columns are kept in the candidate's metadata. Every bad
    row is reported at once (InvalidInput, one entry per row). Imported candidates get
    the edit ops, control code and relationship that generated ones get, so selection
    treats them alike; their fluency is scored only when asked, since that loads an LM.
    Once stored, selection into labeling units is queued as after a generation run
    (`queue_selection=False` leaves it to the caller, as the command does).
    """
    from cfannotate.candidates.uploads import read_candidate_upload
    from generation.parsing import ParseCache
    from generation.postprocess import annotate

    parsed = read_candidate_upload(file_name=file_name, content=content)
    records, originals = _import_records(campaign, parsed.rows, parsed.errors, file_name)
    if score_fluency and fluency_lm is None:
        fluency_lm = _fluency_lm(campaign)
    annotated = annotate(
        records,
        {key: adapter.original_record(original) for key, original in originals.items()},
        parses=ParseCache(),
        fluency_lm=fluency_lm if score_fluency else None,
        threshold=campaign.fluency_threshold,
        sanity=False,  # a researcher's own candidates are theirs, broken or not
    )
    with transaction.atomic():
        imported = candidates_store(
            campaign=campaign,
            originals=originals,
            results=annotated.candidates,
            source=CandidateSource.IMPORTED,
        )
        if campaign.status == CampaignStatus.DRAFT:
            Campaign.objects.filter(pk=campaign.pk).update(status=CampaignStatus.REVIEW)
        if queue_selection:
            candidates_ready_send(campaign.pk)  # labeling selects, as after a run
    logger.info(
        "campaign %s: %s imported from %s", campaign.pk, counted(imported, "candidate"), file_name
    )
    return ImportSummary(
        imported=imported,
        kept=annotated.stats.kept,
        originals=len({record.original_key for record in records}),
        units="building" if queue_selection else "caller",
    )


def _fluency_lm(campaign: Campaign):
    """The LM that scores the campaign's generated candidates, for imported ones."""
    from generation.models import DEFAULT_MODEL, ModelUnavailable, load_cached

    model = fluency_model_of(campaign) or DEFAULT_MODEL
    try:
        return load_cached(model)
    except (ModelUnavailable, OSError) as error:
        raise InvalidInput(
            f"The fluency model {model} cannot be loaded here: {error}",
            fields={"score_fluency": ["Import without fluency scoring, or install the model."]},
        ) from None


# External ids per query of the import index: well under SQLite's 999 parameters.
_IMPORT_LOOKUP_BATCH = 500


@dataclass
class _ImportIndex:
    """What checking an import's rows needs to know about the campaign: only the originals
    the rows name (and their stored texts), read in a few batched queries whatever the
    campaign's size. An id the file names but the campaign lacks is simply absent."""

    originals: dict[str, Original]  # by external id
    gold: set[int]  # originals of gold rounds
    in_units: set[int]  # originals that already have labeling units
    existing: set[tuple[int, str]]  # (original, normalized text) of stored candidates
    labels: dict[str, CampaignLabel]  # every accepted spelling
    label_values: str

    @classmethod
    def of(cls, campaign: Campaign, rows: Sequence) -> "_ImportIndex":
        from cfannotate.campaigns.services import label_lookup

        # The ids exactly as _row_checked reads them; anything else is refused per row.
        named = (_cell(row.values.get("original_id")) for row in rows)
        external_ids = sorted({value for value in named if isinstance(value, str) and value})
        index = cls(
            originals={},
            gold=set(),
            in_units=set(),
            existing=set(),
            labels=label_lookup(campaign),
            label_values=", ".join(campaign.labels.values_list("value", flat=True)),
        )
        for start in range(0, len(external_ids), _IMPORT_LOOKUP_BATCH):
            index._add(campaign, external_ids[start : start + _IMPORT_LOOKUP_BATCH])
        return index

    def _add(self, campaign: Campaign, external_ids: list[str]) -> None:
        from generation.postprocess import normalized_text

        originals = list(
            campaign.originals.filter(external_id__in=external_ids).select_related("label")
        )
        if not originals:
            return
        self.originals.update((original.external_id, original) for original in originals)
        ids = [original.pk for original in originals]
        found = campaign.originals.filter(pk__in=ids)
        # Through labeling's relations on Original (labeling sits above candidates).
        self.gold.update(found.filter(gold_rounds__isnull=False).values_list("id", flat=True))
        self.in_units.update(found.filter(units__isnull=False).values_list("id", flat=True))
        stored = Candidate.objects.filter(campaign=campaign, original_id__in=ids)
        self.existing.update(
            (original_id, normalized_text(text))
            for original_id, text in stored.values_list("original_id", "text")
        )


def _import_records(
    campaign: Campaign, rows: Sequence, errors: dict[str, list[str]], file_name: str
) -> tuple[list, dict[str, Original]]:
    """Candidate records for the rows; InvalidInput listing every bad row (with `errors`)."""
    from cfannotate.candidates.uploads import COLUMNS
    from generation.records import CandidateRecord

    index = _ImportIndex.of(campaign, rows)
    errors = dict(errors)
    seen: dict[tuple[int, str], str] = {}
    records, used = [], {}
    for row in rows:
        original, text, label, problems = _row_checked(row, index, seen)
        if problems:
            errors.setdefault(row.where, []).extend(problems)
            continue
        used[str(original.pk)] = original
        extra = {key: value for key, value in row.values.items() if key not in COLUMNS}
        records.append(
            CandidateRecord(
                original_key=str(original.pk),
                text=text,
                generator=adapter.IMPORTED_GENERATOR,
                intended_label=label.value if label else None,
                metadata={"file": file_name, "row": row.where}
                | ({"columns": extra} if extra else {}),
            )
        )
    if errors:
        raise rows_invalid(errors)
    return records, used


def _row_checked(row, index: _ImportIndex, seen: dict[tuple[int, str], str]):
    """(original, text, intended label, problems) of one uploaded row."""
    from cfannotate.campaigns.services import MAX_TEXT_CHARS
    from generation.postprocess import normalized_text

    problems = []
    external_id = _cell(row.values.get("original_id"))
    text = _cell(row.values.get("text"))
    label_name = _cell(row.values.get("intended_label"))
    original = index.originals.get(external_id) if isinstance(external_id, str) else None
    label = None

    if not isinstance(external_id, str):
        problems.append("original_id: Must be text or a number.")
    elif not external_id:
        problems.append("original_id: Missing; give the id of one of the campaign's originals.")
    elif original is None:
        problems.append(f"original_id: No original {external_id!r} in this campaign.")
    elif original.pk in index.gold:
        problems.append(
            f"original_id: {external_id!r} is the original of a gold round; "
            "its candidates are never shown in real rounds."
        )
    elif original.pk in index.in_units:
        problems.append(
            f"original_id: {external_id!r} already has labeling units; "
            "candidates added now would never be selected."
        )
    if not isinstance(text, str):
        problems.append("text: Must be text.")
    elif not text:
        problems.append("text: Missing or empty.")
    elif "\x00" in text:
        problems.append("text: Contains a NUL character (byte 0); remove it.")
    elif len(text) > MAX_TEXT_CHARS:
        problems.append(f"text: {len(text):,} characters; the limit is {MAX_TEXT_CHARS:,}.")
    elif original is not None:
        key = (original.pk, normalized_text(text))
        if key[1] == normalized_text(original.text):
            problems.append("text: The same as the original; a counterfactual must differ.")
        elif key in seen:
            problems.append(f"text: The same counterfactual as {seen[key]}.")
        elif key in index.existing:
            problems.append("text: Already a candidate of this original.")
        seen.setdefault(key, row.where)
    if label_name:
        label = index.labels.get(label_name.lower()) if isinstance(label_name, str) else None
        if label is None:
            problems.append(
                f"intended_label: Unknown label {label_name!r}; "
                f"expected one of {index.label_values}."
            )
    return original, text, label, problems


def _cell(value):
    """A cell as stripped text; None stays None, numbers become text, other kinds stay."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return str(value)
    return value.strip() if isinstance(value, str) else value
