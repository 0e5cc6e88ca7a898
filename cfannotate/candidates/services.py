"""Writes of candidates: generating them with a campaign's generators, importing them, storing."""

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db import transaction

from cfannotate.campaigns.models import Campaign, CampaignLabel, CampaignStatus, Original
from cfannotate.candidates import adapter
from cfannotate.candidates.models import Candidate, CandidateSource
from cfannotate.core.exceptions import InvalidInput

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


def inference_servers_probe(
    *, entries: Sequence[adapter.GeneratorEntry], before: Sequence[adapter.GeneratorEntry] = ()
) -> None:
    """Send one small request to each inference server `entries` name that `before` did not.

    A wrong URL or model name is refused when the settings are saved, not when a run
    starts: InvalidInput under `generators[i].server_url` (or `.server_model` when the
    server's message is about the model), with the server's own message. Call it outside
    any transaction: a request may take seconds, and must not hold a lock meanwhile.
    """
    known = {entry.server for entry in before if entry.server is not None}
    failures: dict[object, str] = {}
    fields: dict[str, list[str]] = {}
    for entry in entries:
        config = entry.server
        if config is None or config in known:
            continue
        if config not in failures:
            failures[config] = _probe_failure(config)
        if failures[config]:
            option = "server_model" if _about_model(failures[config], config) else "server_url"
            fields[f"generators[{entry.position}].{option}"] = [failures[config]]
    if fields:
        first = next(message for message in failures.values() if message)
        raise InvalidInput(f"The inference server refused these settings: {first}", fields=fields)


def _probe_failure(config) -> str:
    """Why the server at `config` cannot generate, in its own words; "" when it can."""
    from generation.engines.server import InferenceServerError, probe

    try:
        described = probe(config)
    except InferenceServerError as error:
        return str(error)
    logger.info("inference server %s answered: %s", config.base_url, described)
    return ""


def _about_model(message: str, config) -> bool:
    """Whether the refusal is about the model (not served, not accepted), not the URL:
    `probe` then names it as "the model 'name'"."""
    return f"the model {config.model!r}" in message


def originals_tag_slices(*, campaign: Campaign) -> int:
    """Store on each original the names of the slicing functions it matches."""
    from generation.parsing import ParseCache
    from generation.slicing import tag_slices

    originals = list(campaign.originals.order_by("id"))
    docs = ParseCache().parse_many([original.text for original in originals])
    for original, tags in zip(originals, tag_slices(docs), strict=True):
        original.slice_tags = tags
    Original.objects.bulk_update(originals, ["slice_tags"], batch_size=500)
    return len(originals)


def candidates_generate(
    *,
    campaign: Campaign,
    originals: list[Original] | None = None,
    device: str = "auto",
    show_progress: bool = False,
    lm=None,
    fluency_lm=None,
) -> GenerationSummary:
    """Run every generator of the campaign on `originals` (default: all of its own), store.

    The generators run one after another on one shared parse cache; each one's output
    goes through the same dedupe, edits, control code, relationship and fluency filter.
    All candidates are stored together at the end, so a batch that fails stores
    nothing and a batch run twice stores nothing twice. Runs in the calling process:
    each chunk of a generation run (`cfannotate.candidates.runs`), and the demo.
    `lm` / `fluency_lm` replace the models the settings name (tests, benchmarks).
    """
    from generation.generators import GenerationContext, GeneratorOptionsError
    from generation.parsing import ParseCache
    from generation.pipeline import run_generator

    entries = adapter.generator_entries(campaign)
    originals = list(
        originals
        if originals is not None
        else campaign.originals.select_related("label").order_by("id")
    )
    if not originals:
        raise InvalidInput("The campaign has no originals to perturb.")
    by_key = {str(original.pk): original for original in originals}
    records = adapter.original_records(originals)
    parses = ParseCache()
    started = time.perf_counter()
    results, summaries = [], []
    outcomes = {key: {"made": 0, "skipped": []} for key in by_key}
    for entry in entries:
        try:
            generator = entry.load()
        except GeneratorOptionsError as error:
            where = f"generators[{entry.position}]"
            raise InvalidInput(
                f"{entry.name} cannot start: {error}", fields={where: [str(error)]}
            ) from None
        result, skipped = run_generator(
            generator,
            records,
            adapter.pipeline_settings(campaign, entry, device=device),
            fluency_lm=fluency_lm,
            context=GenerationContext(parses=parses, device=device, lm=lm),
            show_progress=show_progress,
        )
        for item in skipped:
            logger.info("%s skipped original %s: %s", entry.name, item.original_key, item.reason)
            outcomes[item.original_key]["skipped"].append(
                {"generator": entry.name, "reason": item.reason}
            )
        for candidate in result.candidates:
            outcomes[candidate.record.original_key]["made"] += 1
        results.extend(result.candidates)
        summaries.append(
            GeneratorSummary(
                name=entry.name,
                candidates=len(result.candidates),
                kept=len(result.kept),
                skipped=len({item.original_key for item in skipped}),
                seconds=result.seconds.get("total", 0.0),
            )
        )
    stored = candidates_store(campaign=campaign, originals=by_key, results=results)
    if campaign.status == CampaignStatus.DRAFT:
        Campaign.objects.filter(pk=campaign.pk).update(status=CampaignStatus.REVIEW)
    kept = sum(summary.kept for summary in summaries)
    logger.info(
        "campaign %s: %d candidates stored (%d kept) from %d originals by %s",
        campaign.pk,
        stored,
        kept,
        len(originals),
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
            _queue_selection(campaign.pk)
    logger.info("campaign %s: %d candidates imported from %s", campaign.pk, imported, file_name)
    return ImportSummary(
        imported=imported,
        kept=annotated.stats.kept,
        originals=len({record.original_key for record in records}),
        units="building" if queue_selection else "caller",
    )


def _fluency_lm(campaign: Campaign):
    """The LM that scores the campaign's generated candidates, for imported ones."""
    from generation.models import DEFAULT_MODEL, ModelUnavailable, load_cached

    model = adapter.fluency_model_of(campaign) or DEFAULT_MODEL
    try:
        return load_cached(model)
    except (ModelUnavailable, OSError) as error:
        raise InvalidInput(
            f"The fluency model {model} cannot be loaded here: {error}",
            fields={"score_fluency": ["Import without fluency scoring, or install the model."]},
        ) from None


def _queue_selection(campaign_id: int) -> None:
    """Select the diverse candidates into labeling units, as a finished generation run does."""
    from cfannotate.labeling.tasks import select_units

    transaction.on_commit(lambda: select_units.enqueue(campaign_id))


@dataclass
class _ImportIndex:
    """What checking an import's rows needs to know about the campaign, read once."""

    originals: dict[str, Original]  # by external id
    gold: set[int]  # originals of gold rounds
    in_units: set[int]  # originals that already have labeling units
    existing: set[tuple[int, str]]  # (original, normalized text) of stored candidates
    labels: dict[str, CampaignLabel]  # every accepted spelling
    label_values: str

    @classmethod
    def of(cls, campaign: Campaign) -> "_ImportIndex":
        from cfannotate.campaigns.services import label_lookup
        from cfannotate.labeling.models import GoldRound, LabelingUnit
        from generation.postprocess import normalized_text

        stored = Candidate.objects.filter(campaign=campaign).values_list("original_id", "text")
        return cls(
            originals={
                original.external_id: original
                for original in campaign.originals.select_related("label").order_by("id")
            },
            gold=set(
                GoldRound.objects.filter(campaign=campaign).values_list("original_id", flat=True)
            ),
            in_units=set(
                LabelingUnit.objects.filter(campaign=campaign).values_list("original_id", flat=True)
            ),
            existing={(original_id, normalized_text(text)) for original_id, text in stored},
            labels=label_lookup(campaign),
            label_values=", ".join(campaign.labels.values_list("value", flat=True)),
        )


def _import_records(
    campaign: Campaign, rows: Sequence, errors: dict[str, list[str]], file_name: str
) -> tuple[list, dict[str, Original]]:
    """Candidate records for the rows; InvalidInput listing every bad row (with `errors`)."""
    from cfannotate.campaigns.services import MAX_ROW_ERRORS_REPORTED
    from cfannotate.candidates.uploads import COLUMNS
    from generation.records import CandidateRecord

    index = _ImportIndex.of(campaign)
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
        in_file_order = sorted(errors.items(), key=lambda item: int(item[0].split()[-1]))
        shown = dict(in_file_order[:MAX_ROW_ERRORS_REPORTED])
        message = f"{len(errors)} row(s) are invalid; nothing was imported."
        if len(errors) > len(shown):
            message += f" Only the first {len(shown)} are listed."
        raise InvalidInput(message, fields=shown)
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
