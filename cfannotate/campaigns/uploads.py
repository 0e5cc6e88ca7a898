"""Uploading a dataset of originals: the file's columns mapped to id, text, context and label.

`upload_preview` reads a CSV/TSV/JSONL file (`cfannotate.core.tabular`), guesses
which column is which from common dataset headers, and checks every row exactly as
the import will (`originals_check`), without writing. `originals_upload` imports a
file under a mapping: every row or none. Columns that are not mapped are kept in
each original's `extra`. `upload_summary_note` keeps what a preview showed beside the
waiting file, and `upload_summary_from_note` shows it again while it still holds.
"""

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Max
from django.db.models.functions import MD5

from cfannotate.campaigns.models import Campaign, CampaignLabel, Original
from cfannotate.campaigns.services import label_lookup, originals_check, originals_create
from cfannotate.core import tabular
from cfannotate.core.exceptions import InvalidInput
from cfannotate.core.row_report import MAX_ROW_ERRORS_REPORTED, rows_invalid

FIELDS = ("id", "context", "text", "label")
PREVIEW_ROWS = 10
LABEL_SPELLINGS_SHOWN = 20

# Headers of common datasets, most specific first, compared without case, spaces or _.
_GUESSES = {
    "id": (
        "id",
        "idx",
        "guid",
        "uid",
        "pairid",
        "exampleid",
        "sentenceid",
        "reviewid",
        "originalid",
    ),
    "label": (
        "label",
        "goldlabel",
        "sentiment",
        "polarity",
        "isduplicate",  # QQP
        "class",
        "category",
        "target",
        "y",
    ),
    "context": ("context", "premise", "sentence1", "question1", "q1", "1string", "passage"),
    "text": ("text", "sentence", "review", "content", "comment", "tweet", "body", "document"),
}
# In pair tasks the perturbed field is the second one (NLI hypothesis, SNLI's sentence2).
_PAIR_TEXT_GUESSES = ("hypothesis", "sentence2", "question2", "q2", "2string")  # MRPC: #2 String


def _key(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())


def field_names(campaign: Campaign) -> dict[str, str]:
    """The fields a campaign's file maps, named as the researcher knows them."""
    names = {"id": "Id", "text": campaign.text_name, "label": "Label"}
    if campaign.is_pair_task:
        names["context"] = campaign.context_name
    return {name: names[name] for name in FIELDS if name in names}


def mapping_guess(campaign: Campaign, columns: list[str]) -> dict[str, str | None]:
    """For each field the column that most likely holds it, or None; no column twice."""
    guesses = {name: [_key(spelling) for spelling in _GUESSES[name]] for name in FIELDS}
    text_first = [_key(campaign.text_name)]
    if campaign.is_pair_task:
        guesses["context"] = [_key(campaign.context_name), *guesses["context"]]
        text_first += [_key(spelling) for spelling in _PAIR_TEXT_GUESSES]
    guesses["text"] = [*text_first, *guesses["text"]]
    taken: set[str] = set()
    mapping: dict[str, str | None] = {}
    for name in field_names(campaign):
        found = None
        for spelling in guesses[name]:
            found = next(
                (c for c in columns if c not in taken and _key(c) == spelling and spelling), None
            )
            if found:
                break
        mapping[name] = found
        if found:
            taken.add(found)
    return mapping


def mapping_problems(campaign: Campaign, mapping: dict[str, str | None]) -> dict[str, str]:
    """Field -> why the mapping cannot be imported; empty when it can."""
    names = field_names(campaign)
    problems = {
        name: f"Choose the column that holds the {names[name].lower()}."
        for name in ("context", "text", "label")
        if name in names and not mapping.get(name)
    }
    used: dict[str, str] = {}
    for name, column in mapping.items():
        if column and column in used:
            problems[name] = f"The column {column!r} is already the {names[used[column]].lower()}."
        elif column:
            used[column] = name
    return problems


def mapping_from(
    campaign: Campaign, columns: list[str], given: dict[str, object] | None
) -> dict[str, str | None]:
    """The guesses, overridden field by field by `given` (a column name, or None for none)."""
    mapping = mapping_guess(campaign, columns)
    if not given:
        return mapping
    names = field_names(campaign)
    errors: dict[str, list[str]] = {}
    for name, column in given.items():
        if name not in names:
            errors[f"mapping.{name}"] = [f"Not a field; map one of {', '.join(names)}."]
        elif column in (None, ""):
            mapping[name] = None
        elif not isinstance(column, str) or column not in columns:
            errors[f"mapping.{name}"] = [
                f"The file has no column {column!r}; its columns are "
                f"{', '.join(repr(c) for c in columns)}."
            ]
        else:
            mapping[name] = column
    if errors:
        raise InvalidInput("The column mapping does not fit the file.", fields=errors)
    return mapping


@dataclass(frozen=True)
class LabelSpelling:
    spelling: str
    rows: int
    label: CampaignLabel | None  # None: not a spelling of any of the campaign's labels


@dataclass
class UploadPreview:
    file_name: str
    table: tabular.Table
    mapping: dict[str, str | None]
    problems: dict[str, str]  # field -> why the mapping does not work yet
    labels: list[LabelSpelling] = field(default_factory=list)
    other_spellings: int = 0  # label spellings beyond those listed
    errors: dict[str, list[str]] = field(default_factory=dict)  # where -> problems, file order
    originals: list[Original] = field(default_factory=list)  # unsaved, when there are no errors
    # Rows whose text (and context) an original of the campaign has already: importing
    # them adds them again, which may be meant (the same sentence with another label).
    same_text_rows: int = 0
    same_text_note: str = ""

    @property
    def rows(self) -> int:
        return len(self.table.rows)

    @property
    def sample(self) -> list[tabular.TableRow]:
        return self.table.rows[:PREVIEW_ROWS]

    @property
    def shown_errors(self) -> dict[str, list[str]]:
        return dict(list(self.errors.items())[:MAX_ROW_ERRORS_REPORTED])

    def sample_cells(self) -> list[tuple[str, list[object]]]:
        """The first rows as (where, cells in column order); a missing JSONL key is None."""
        columns = self.table.columns
        return [(row.where, [row.values.get(c) for c in columns]) for row in self.sample]

    @property
    def importable(self) -> bool:
        return not self.problems and not self.errors and bool(self.originals)

    def error(self) -> InvalidInput:
        """Why this file cannot be imported, as one error with the first 50 rows."""
        if self.problems:
            return InvalidInput(
                "Map the file's columns first; nothing was imported.",
                fields={f"mapping.{name}": [problem] for name, problem in self.problems.items()},
            )
        return rows_invalid(self.errors)


@dataclass(frozen=True)
class TableSummary:
    format_name: str
    encoding: str
    columns: list[str]


@dataclass(frozen=True)
class RowErrorsSummary:
    """A preview's rows that cannot be imported: how many (its len), the first ones' problems."""

    count: int
    shown: dict[str, list[str]]

    def __len__(self) -> int:
        return self.count


@dataclass(frozen=True)
class UploadSummary:
    """What the upload form shows of an `UploadPreview`, under the same names, without the
    file's rows: what `waiting_upload_context` shows of a waiting file, which it would
    otherwise read and check again on every load of the page (1.1-1.6 s for 30 MB)."""

    file_name: str
    table: TableSummary
    rows: int
    mapping: dict[str, str | None]
    problems: dict[str, str]
    sample: list[tuple[str, list[object]]]
    labels: list[LabelSpelling]
    other_spellings: int
    errors: RowErrorsSummary
    same_text_note: str
    importable: bool

    @property
    def shown_errors(self) -> dict[str, list[str]]:
        return self.errors.shown

    def sample_cells(self) -> list[tuple[str, list[object]]]:
        return self.sample


# The form of a note; a note of another form is read as none (the file is read again).
_NOTE_VERSION = 1


def _preview_state(campaign: Campaign, labels: list[CampaignLabel]) -> list:
    """What a preview depends on besides the file and the mapping, in two small queries'
    worth: the campaign's settings (its names for the fields), labels (spellings), the
    originals (ids taken, numbering, same texts) and the limits on files. Originals are
    only added and deleted (their count and last id tell), but for an edit in the admin:
    that shows in the preview from the next upload or change of mapping on, and the
    import checks every row again anyway."""
    originals = campaign.originals.aggregate(count=Count("*"), last=Max("id"))
    return [
        campaign.updated_at.isoformat(),
        originals["count"],
        originals["last"],
        sorted([label.pk, label.value, label.display_name] for label in labels),
        [settings.UPLOAD_MAX_BYTES, settings.UPLOAD_MAX_ROWS],
    ]


def upload_summary_note(campaign: Campaign, preview: UploadPreview) -> dict:
    """The note to keep beside a previewed file: its summary, under what it holds for."""
    return {
        "version": _NOTE_VERSION,
        "state": _preview_state(campaign, list(campaign.labels.all())),
        "mapping": preview.mapping,
        "summary": {
            "file_name": preview.file_name,
            "format_name": preview.table.format_name,
            "encoding": preview.table.encoding,
            "columns": preview.table.columns,
            "rows": preview.rows,
            "problems": preview.problems,
            "sample": preview.sample_cells(),
            "labels": [
                [spelling.spelling, spelling.rows, spelling.label.pk if spelling.label else None]
                for spelling in preview.labels
            ],
            "other_spellings": preview.other_spellings,
            "error_count": len(preview.errors),
            "shown_errors": preview.shown_errors,
            "same_text_note": preview.same_text_note,
            "importable": preview.importable,
        },
    }


def upload_summary_from_note(
    campaign: Campaign, note: dict | None, mapping: dict | None
) -> UploadSummary | None:
    """The summary kept in `note` if it was made under `mapping` and the campaign is as
    it was then (`_preview_state`); None otherwise: the file must be previewed again."""
    if not note or note.get("version") != _NOTE_VERSION or note.get("mapping") != mapping:
        return None
    labels = list(campaign.labels.all())
    # Through JSON, as the note went: lists where the state has tuples.
    if note.get("state") != json.loads(json.dumps(_preview_state(campaign, labels))):
        return None
    kept = note["summary"]
    by_id = {label.pk: label for label in labels}
    return UploadSummary(
        file_name=kept["file_name"],
        table=TableSummary(kept["format_name"], kept["encoding"], kept["columns"]),
        rows=kept["rows"],
        mapping=note["mapping"],
        problems=kept["problems"],
        sample=[(where, cells) for where, cells in kept["sample"]],
        labels=[
            LabelSpelling(spelling, rows, by_id.get(label_id))
            for spelling, rows, label_id in kept["labels"]
        ],
        other_spellings=kept["other_spellings"],
        errors=RowErrorsSummary(kept["error_count"], kept["shown_errors"]),
        same_text_note=kept["same_text_note"],
        importable=kept["importable"],
    )


def upload_table(*, file_name: str, content: bytes) -> tabular.Table:
    """The file's rows, within the UPLOAD_MAX_BYTES and UPLOAD_MAX_ROWS settings."""
    return tabular.table_read(
        file_name=file_name,
        content=content,
        max_bytes=settings.UPLOAD_MAX_BYTES,
        max_rows=settings.UPLOAD_MAX_ROWS,
    )


def upload_preview(
    *,
    campaign: Campaign,
    file_name: str,
    content: bytes,
    mapping: dict[str, object] | None = None,
) -> UploadPreview:
    """The file read, its columns mapped (guessed where not given), every row checked."""
    table = upload_table(file_name=file_name, content=content)
    if not table.columns and table.errors:
        # Not one line was an object (a .json file holding one array): no column to map.
        raise rows_invalid(
            table.errors, nothing="the file has no columns to map, so nothing was imported"
        )
    resolved = mapping_from(campaign, table.columns, mapping)
    preview = UploadPreview(
        file_name=file_name,
        table=table,
        mapping=resolved,
        problems=mapping_problems(campaign, resolved),
    )
    if resolved.get("label"):
        _summarize_labels(preview, campaign)
    if preview.problems:
        preview.errors = dict(table.errors)
        return preview
    checked = originals_check(
        campaign=campaign, records=(_record(row, resolved, table.columns) for row in table.rows)
    )
    errors = {where: list(problems) for where, problems in table.errors.items()}
    for error in checked.errors:
        column = resolved.get(error.field)
        where = table.rows[error.row - 1].where
        source = f"{error.field} ({column!r})" if column else error.field
        errors.setdefault(where, []).append(f"{source}: {error.message}")
    preview.errors = dict(sorted(errors.items(), key=lambda item: int(item[0].split()[-1])))
    preview.originals = [] if preview.errors else checked.originals
    if preview.originals:
        preview.same_text_rows = _same_text_rows(campaign, preview.originals)
        preview.same_text_note = _same_text_note(campaign, preview)
    return preview


def _same_text_rows(campaign: Campaign, originals: list[Original]) -> int:
    """How many of the rows an original of the campaign has the text (and, in a pair task,
    the context) of: one query, of the originals' digests rather than their texts."""
    names = ("text", "context") if campaign.is_pair_task else ("text",)
    digests = {f"{name}_md5": MD5(name) for name in names}
    there = set(campaign.originals.annotate(**digests).values_list(*digests))

    def key(original: Original) -> tuple[str, ...]:
        return tuple(
            hashlib.md5(getattr(original, name).encode(), usedforsecurity=False).hexdigest()
            for name in names
        )

    return sum(1 for original in originals if key(original) in there)


def _same_text_note(campaign: Campaign, preview: UploadPreview) -> str:
    if not preview.same_text_rows:
        return ""
    what = "text"
    if campaign.is_pair_task:
        what = f"{campaign.context_name.lower()} and {campaign.text_name.lower()}"
    rows = preview.same_text_rows
    return (
        f"{rows} of {preview.rows} row{'s' if preview.rows != 1 else ''} "
        f"{'has' if rows == 1 else 'have'} the same {what} as originals already in this "
        "campaign; importing adds them again."
    )


def _record(row: tabular.TableRow, mapping: dict[str, str | None], columns: list[str]) -> dict:
    """The row as `originals_check` reads it: mapped fields by name, other columns as extra."""
    mapped = {column: name for name, column in mapping.items() if column}
    record = {name: row.values.get(column) for column, name in mapped.items()}
    extra_names = _extra_names([column for column in columns if column not in mapped])
    for column, name in extra_names.items():
        if column in row.values:
            record[name] = row.values[column]
    return record


def _extra_names(columns: list[str]) -> dict[str, str]:
    """The key each unmapped column is kept under in `extra`: its own name, but a column
    named like a field must not become that field, so `id` is kept as `id_column` (or
    `id_column_2`, ... when the file has an `id_column` already)."""
    taken = set(columns) | set(FIELDS)
    names = {}
    for column in columns:
        name = column
        if column in FIELDS:
            name, number = f"{column}_column", 2
            while name in taken:
                name, number = f"{column}_column_{number}", number + 1
            taken.add(name)
        names[column] = name
    return names


def _summarize_labels(preview: UploadPreview, campaign: Campaign) -> None:
    lookup = label_lookup(campaign)
    column = preview.mapping["label"]
    counts = Counter(
        str(value).strip() if (value := row.values.get(column)) is not None else ""
        for row in preview.table.rows
    )
    ranked = counts.most_common()
    preview.labels = [
        LabelSpelling(spelling, rows, lookup.get(spelling.lower()))
        for spelling, rows in ranked[:LABEL_SPELLINGS_SHOWN]
    ]
    preview.other_spellings = max(0, len(ranked) - LABEL_SPELLINGS_SHOWN)


@transaction.atomic
def originals_upload(*, campaign: Campaign, preview: UploadPreview) -> int:
    """Import every row of a previewed file, or none: InvalidInput names what is wrong.

    Two imports racing for the same ids: the later one gets Conflict and writes nothing.
    """
    if not preview.importable:
        raise preview.error()
    return originals_create(originals=preview.originals)
