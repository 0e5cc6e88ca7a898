"""A researcher's own candidates, from a CSV or JSONL file: every row checked, annotated as
generated candidates are (edit ops, control code, relationship; fluency on request), and
stored all or none.

Annotating is the slow part: it parses both texts of every pair, about 40 ms a pair for
a movie review on one core, so a file of thousands takes minutes. The command does it
in the foreground (`candidates_import`). The page and the API check the rows at once, so
a bad file is refused in the request with every bad row named, and leave annotating and
storing to a background task (`candidate_import_start`, `candidate_import_process`) that
reports its progress on a `CandidateImport` and can be cancelled until it stores.
"""

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from django.db import IntegrityError, transaction
from django.utils import timezone

from cfannotate.campaigns.generator_settings import fluency_model_of
from cfannotate.campaigns.models import Campaign, CampaignLabel, CampaignStatus, Original
from cfannotate.candidates import adapter
from cfannotate.candidates.hooks import candidates_ready_send
from cfannotate.candidates.models import (
    ACTIVE_IMPORT_STATES,
    Candidate,
    CandidateImport,
    CandidateSource,
    ImportState,
)
from cfannotate.candidates.services import candidates_store
from cfannotate.core.exceptions import CfannotateError, Conflict, InvalidInput, NotFound
from cfannotate.core.row_report import rows_invalid
from cfannotate.core.text import counted

logger = logging.getLogger(__name__)

# Rows annotated between two progress reports (and checks for a cancel): a few seconds of
# work for long reviews. Parts are annotated one after another; within one, the annotation
# pool's workers (4 by default) share the pairs, 64 to a task.
IMPORT_PART_ROWS = 256
UNEXPECTED_FAILURE = (
    "The import stopped on an unexpected error; nothing was imported. The server's log "
    "has the details."
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


@dataclass(frozen=True)
class ImportRows:
    """An uploaded file's rows, checked: one candidate record per row, in file order."""

    records: list  # generation.records.CandidateRecord
    originals: dict[str, Original]  # by the records' original_key


@dataclass(frozen=True)
class AnnotatedImport:
    candidates: list  # generation.postprocess.AnnotatedCandidate
    kept: int


class ImportCancelled(Exception):
    """The researcher cancelled the import while it ran: stop, store nothing."""


def import_rows_read(campaign: Campaign, *, file_name: str, content: bytes) -> ImportRows:
    """The file's rows as candidate records; InvalidInput naming every bad row (or the
    whole file's problem: encoding, syntax, columns, size)."""
    from cfannotate.candidates.uploads import read_candidate_upload

    parsed = read_candidate_upload(file_name=file_name, content=content)
    records, originals = _import_records(campaign, parsed.rows, parsed.errors, file_name)
    return ImportRows(records=records, originals=originals)


def import_rows_annotate(
    campaign: Campaign,
    rows: ImportRows,
    *,
    score_fluency: bool = False,
    fluency_lm=None,
    workers: int | None = 0,
    progress: Callable[[int, int], None] | None = None,
) -> AnnotatedImport:
    """Annotate the rows in parts of IMPORT_PART_ROWS, calling `progress(done, total)`
    after each. The rows were checked against each other and the stored candidates, so
    no part has a duplicate for another to drop. `workers`: annotation processes (0: in
    this process; None: the pool's default)."""
    from generation.parsing import ParseCache
    from generation.postprocess import annotate

    if score_fluency and fluency_lm is None:
        fluency_lm = _fluency_lm(campaign)
    originals = {key: adapter.original_record(original) for key, original in rows.originals.items()}
    candidates, kept, total = [], 0, len(rows.records)
    for start in range(0, total, IMPORT_PART_ROWS):
        part = rows.records[start : start + IMPORT_PART_ROWS]
        annotated = annotate(
            part,
            {record.original_key: originals[record.original_key] for record in part},
            # A cache per part: a long file's parses are not all kept at once.
            parses=ParseCache(),
            fluency_lm=fluency_lm if score_fluency else None,
            threshold=campaign.fluency_threshold,
            workers=workers,
            sanity=False,  # a researcher's own candidates are theirs, broken or not
        )
        candidates.extend(annotated.candidates)
        kept += annotated.stats.kept
        if progress:
            progress(start + len(part), total)
    return AnnotatedImport(candidates=candidates, kept=kept)


def import_rows_store(
    campaign: Campaign,
    rows: ImportRows,
    annotated: AnnotatedImport,
    *,
    file_name: str,
    queue_selection: bool = True,
) -> ImportSummary:
    """Store the annotated rows in one transaction; the campaign leaves Draft for Review
    and, unless `queue_selection=False`, selection into labeling units is queued."""
    with transaction.atomic():
        imported = candidates_store(
            campaign=campaign,
            originals=rows.originals,
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
        kept=annotated.kept,
        originals=len({record.original_key for record in rows.records}),
        units="building" if queue_selection else "caller",
    )


def candidates_import(
    *,
    campaign: Campaign,
    file_name: str,
    content: bytes,
    score_fluency: bool = False,
    fluency_lm=None,
    queue_selection: bool = True,
    workers: int | None = 0,
    progress: Callable[[int, int], None] | None = None,
) -> ImportSummary:
    """Import the researcher's own candidates from a CSV or JSONL file, in the foreground:
    all rows or none.

    Columns: `original_id` (an original's external id), `text`, optionally
    `intended_label`; other columns are kept in the candidate's metadata. Every bad
    row is reported at once (InvalidInput, one entry per row). Imported candidates get
    the edit ops, control code and relationship that generated ones get, so selection
    treats them alike; their fluency is scored only when asked, since that loads an LM.
    Once stored, selection into labeling units is queued as after a generation run
    (`queue_selection=False` leaves it to the caller, as the command does).
    """
    rows = import_rows_read(campaign, file_name=file_name, content=content)
    annotated = import_rows_annotate(
        campaign,
        rows,
        score_fluency=score_fluency,
        fluency_lm=fluency_lm,
        workers=workers,
        progress=progress,
    )
    return import_rows_store(
        campaign, rows, annotated, file_name=file_name, queue_selection=queue_selection
    )


# --------------------------------------------------------------------------- in the background


def candidate_import_start(
    *, campaign: Campaign, user, file_name: str, content: bytes, score_fluency: bool = False
) -> CandidateImport:
    """Check the file's rows now (InvalidInput naming every bad one) and queue the rest.

    Conflict while another import of the campaign is queued or running."""
    from cfannotate.candidates.tasks import import_candidates

    rows = import_rows_read(campaign, file_name=file_name, content=content)
    try:
        with transaction.atomic():
            job = CandidateImport.objects.create(
                campaign=campaign,
                created_by=user,
                file_name=file_name[:200],
                content=content,
                score_fluency=score_fluency,
                rows_total=len(rows.records),
            )
            transaction.on_commit(partial(import_candidates.enqueue, job.pk))
    except IntegrityError:
        raise _busy(campaign) from None
    logger.info(
        "campaign %s: import %s of %s queued (%s)",
        campaign.pk,
        job.pk,
        file_name,
        counted(job.rows_total, "row"),
    )
    return job


def _busy(campaign: Campaign) -> Conflict:
    active = campaign.candidate_imports.filter(state__in=ACTIVE_IMPORT_STATES).defer("content")
    running = active.first()
    name = running.file_name if running else "Another file"
    return Conflict(
        f"{name} is still being imported into this campaign; wait until it ends, or "
        "cancel it, before importing another file.",
        fields={"file": ["Another import is in progress."]},
    )


def candidate_import_process(import_id: int) -> str:
    """The background task's work: annotate and store one queued import. Returns its
    final state. Any problem is recorded on the import, never left half-written."""
    with transaction.atomic():
        job = (
            CandidateImport.objects.select_for_update()
            .select_related("campaign")
            .filter(pk=import_id)
            .first()
        )
        if job is None or job.state != ImportState.QUEUED:
            return job.state if job else "gone"  # cancelled before a worker took it
        now = timezone.now()
        job.state, job.started_at, job.updated_at = ImportState.RUNNING, now, now
        job.save(update_fields=["state", "started_at", "updated_at"])
    try:
        summary = _import_in_background(job)
    except ImportCancelled:
        logger.info("import %s: cancelled while it ran; nothing stored", import_id)
        return ImportState.CANCELLED
    except CfannotateError as error:
        _import_failed(import_id, error.message, error.fields)
        return ImportState.FAILED
    except Exception:
        logger.exception("import %s: unexpected error", import_id)
        _import_failed(import_id, UNEXPECTED_FAILURE, {})
        raise
    logger.info("import %s: done, %s", import_id, counted(summary.imported, "candidate"))
    return ImportState.DONE


def _import_in_background(job: CandidateImport) -> ImportSummary:
    campaign = job.campaign
    content = bytes(job.content)
    rows = import_rows_read(campaign, file_name=job.file_name, content=content)
    CandidateImport.objects.filter(pk=job.pk).update(rows_total=len(rows.records))
    annotated = import_rows_annotate(
        campaign,
        rows,
        score_fluency=job.score_fluency,
        workers=None,  # a background worker may start the annotation pool
        progress=partial(_progress_record, job.pk),
    )
    with transaction.atomic():
        # Locked until the end: a cancel either comes before (and nothing is stored)
        # or finds the import done.
        _running_locked(job.pk)
        summary = import_rows_store(campaign, rows, annotated, file_name=job.file_name)
        now = timezone.now()
        CandidateImport.objects.filter(pk=job.pk).update(
            state=ImportState.DONE,
            rows_done=len(rows.records),
            imported=summary.imported,
            kept=summary.kept,
            originals=summary.originals,
            content=b"",
            updated_at=now,
            finished_at=now,
        )
    return summary


def _progress_record(import_id: int, done: int, total: int) -> None:
    """Record progress; ImportCancelled when the import is no longer running."""
    updated = CandidateImport.objects.filter(pk=import_id, state=ImportState.RUNNING).update(
        rows_done=min(done, total), updated_at=timezone.now()
    )
    if not updated:
        raise ImportCancelled


def _running_locked(import_id: int) -> None:
    state = (
        CandidateImport.objects.select_for_update()
        .filter(pk=import_id)
        .values_list("state", flat=True)
        .first()
    )
    if state != ImportState.RUNNING:
        raise ImportCancelled


def _import_failed(import_id: int, message: str, fields: dict) -> None:
    now = timezone.now()
    CandidateImport.objects.filter(pk=import_id, state=ImportState.RUNNING).update(
        state=ImportState.FAILED,
        error=message,
        error_fields=fields,
        content=b"",
        updated_at=now,
        finished_at=now,
    )


def candidate_import_cancel(*, campaign: Campaign, import_id: int) -> CandidateImport:
    """Cancel a queued or running import: nothing of it is stored. Conflict once it ended."""
    with transaction.atomic():
        job = (
            campaign.candidate_imports.select_for_update()
            .defer("content")
            .filter(pk=import_id)
            .first()
        )
        if job is None:
            raise NotFound(f"No import {import_id} in this campaign.")
        if not job.active:
            raise Conflict(
                f"The import of {job.file_name} has already ended "
                f"({job.get_state_display().lower()}); there is nothing to cancel."
            )
        now = timezone.now()
        job.state, job.content, job.finished_at, job.updated_at = (
            ImportState.CANCELLED,
            b"",
            now,
            now,
        )
        job.save(update_fields=["state", "content", "finished_at", "updated_at"])
    logger.info("campaign %s: import %s cancelled", campaign.pk, import_id)
    return job


def candidate_import_of(campaign: Campaign, import_id: int) -> CandidateImport:
    """One import of the campaign, without its file; NotFound otherwise."""
    job = campaign.candidate_imports.defer("content").filter(pk=import_id).first()
    if job is None:
        raise NotFound(f"No import {import_id} in this campaign.")
    return job


def import_message(job: CandidateImport) -> str:
    """Where the import stands, in words (the API's `message`, the page's flash when done)."""
    if job.state == ImportState.DONE:
        summary = ImportSummary(imported=job.imported, kept=job.kept, originals=job.originals)
        return (
            f"Imported {counted(job.imported, 'candidate')} for "
            f"{counted(job.originals, 'original')} from {job.file_name}. {summary.message}"
        )
    if job.state == ImportState.FAILED:
        return f"The import of {job.file_name} failed; nothing of it was imported. {job.error}"
    if job.state == ImportState.CANCELLED:
        return f"The import of {job.file_name} was cancelled; nothing of it was imported."
    if job.state == ImportState.RUNNING:
        return f"{job.rows_done} of {counted(job.rows_total, 'row')} annotated."
    return (
        f"{job.file_name}: {counted(job.rows_total, 'row')}, all valid; waiting for a worker "
        "of the default queue to annotate and store them."
    )


def latest_candidate_import(campaign: Campaign) -> CandidateImport | None:
    """The campaign's last import, without its file (the page shows its progress or end)."""
    return campaign.candidate_imports.defer("content").first()


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
