"""Benchmark: streaming the contrast set of a campaign with a million judgments' worth of labels.

A sentiment campaign is filled with originals, three counterfactuals each, and one
aggregated label per counterfactual from three votes (K=3): `--counterfactuals
333334` is 1,000,000 judgments' worth, the default. The judgments themselves are not
inserted: the contrast set is read from the aggregated labels, as quality control
leaves them. The rows go in by bulk insert, in batches, with progress on stderr.

Ours: the contrast-set export as the page, API and command stream it
(`cfannotate.exports`), JSONL and CSV, written to a null sink. Baseline, in the same
run on the same data: the straightforward export that lists every row through the
ORM (`select_related`), `json.dumps` each and joins them into one string. Both write
the same bytes (checked). Memory is the process's peak resident set (Linux VmHWM,
reset through /proc/self/clear_refs before each measurement), so it counts Django,
the database driver and the rows, not only Python objects.

    python bench/export.py --quick        # 30,000 counterfactuals, within 60 s; extrapolated
    python bench/export.py                # the full million
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/cfannotate_bench python bench/export.py

The last line reads `RESULT export rows_per_s=... peak_mb=... ratio=...`: rows per
second of the streamed JSONL export, its peak memory, and its speed over the baseline's.
"""

import argparse
import hashlib
import json
import math
import os
import random
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

FULL_COUNTERFACTUALS = 333_334  # x 3 votes = 1,000,000 judgments
QUICK_COUNTERFACTUALS = 30_000
PER_ORIGINAL = 3
VOTES = 3
BATCH_ORIGINALS = 2_000
CODES = ("negation", "lexical", "quantifier", "insert", "delete", "resemantic")
WORDS = ("good", "great", "dull", "funny", "long", "moving", "bland", "sharp", "tender", "loud")


# -- memory: the peak resident set of this process, reset between measurements ---------


def _status_mb(field: str) -> float:
    match = re.search(rf"^{field}:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.M)
    return int(match.group(1)) / 1024 if match else float("nan")


def peak_reset() -> None:
    """Start VmHWM again from the current resident set (Linux >= 4.0)."""
    Path("/proc/self/clear_refs").write_text("5")


@dataclass(frozen=True)
class Measure:
    name: str
    rows: int
    seconds: float
    peak_mb: float  # peak resident set of the process during the run
    growth_mb: float  # of which above the resident set at its start
    digest: str  # sha256 of what was written

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds else 0.0


class _NullSink:
    """Where the export goes: nowhere, but every chunk is encoded and hashed on the way."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256()
        self.bytes = 0

    def write(self, text: str) -> None:
        data = text.encode("utf-8")
        self.bytes += len(data)
        self.digest.update(data)


def measure(name: str, run: Callable[[_NullSink], int]) -> Measure:
    import gc

    gc.collect()
    peak_reset()
    start_mb = _status_mb("VmRSS")
    sink = _NullSink()
    started = time.perf_counter()
    rows = run(sink)
    seconds = time.perf_counter() - started
    peak_mb = _status_mb("VmHWM")
    return Measure(name, rows, seconds, peak_mb, peak_mb - start_mb, sink.digest.hexdigest())


# -- the campaign ----------------------------------------------------------------------


def _progress(done: int, total: int, started: float) -> None:
    width = 30
    filled = int(width * done / total) if total else width
    rate = done / (time.perf_counter() - started + 1e-9)
    print(
        f"\r  inserting [{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,} "
        f"counterfactuals ({rate:,.0f}/s)",
        end="" if done < total else "\n",
        file=sys.stderr,
        flush=True,
    )


class _Insert:
    """Rows of one model by executemany: Django's bulk_create spends ~20x the database's
    time preparing each object, which here would be minutes. Columns not given get their
    field's default (auto_now fields: now), prepared for the database once."""

    def __init__(self, model, given: tuple[str, ...]) -> None:
        from django.db import connection
        from django.utils import timezone

        now = timezone.now()
        fields = model._meta.concrete_fields
        by_name = {field.attname: field for field in fields}
        self.given = given
        self.json = [
            by_name[name] for name in given if by_name[name].get_internal_type() == "JSONField"
        ]
        self.constants = []
        for field in fields:
            if field.attname in given or field.primary_key:
                continue  # a key not given is the database's to number
            value = (
                now
                if getattr(field, "auto_now_add", False) or getattr(field, "auto_now", False)
                else field.get_default()
            )
            self.constants.append((field.column, field.get_db_prep_save(value, connection)))
        columns = [by_name[name].column for name in given] + [c for c, _ in self.constants]
        quote = connection.ops.quote_name
        table, names = quote(model._meta.db_table), ", ".join(map(quote, columns))
        values = ", ".join(["%s"] * len(columns))
        self.sql = f"INSERT INTO {table} ({names}) VALUES ({values})"  # noqa: S608 (model names)

    def __call__(self, rows: list[tuple]) -> None:
        from django.db import connection

        constants = tuple(value for _, value in self.constants)
        positions = [self.given.index(field.attname) for field in self.json]
        prepared = []
        for row in rows:
            if positions:
                row = list(row)
                for position, field in zip(positions, self.json, strict=True):
                    row[position] = field.get_db_prep_save(row[position], connection)
            prepared.append((*row, *constants))
        with connection.cursor() as cursor:
            cursor.executemany(self.sql, prepared)


def populate(*, owner, counterfactuals: int, seed: int = 7, progress: bool = True):
    """A sentiment campaign with `counterfactuals` aggregated labels of three votes each."""
    from django.db import transaction
    from django.db.models import Max

    from cfannotate.campaigns.models import Original
    from cfannotate.candidates.models import Candidate

    rng = random.Random(seed)
    campaign, labels = _campaign_create(owner, rng)
    insert_original, insert_candidate, insert_aggregate = _inserts()
    next_original = (Original.objects.aggregate(n=Max("id"))["n"] or 0) + 1
    next_candidate = (Candidate.objects.aggregate(n=Max("id"))["n"] or 0) + 1
    started = time.perf_counter()
    made = 0
    while made < counterfactuals:
        originals, candidates, aggregates = _batch_rows(
            rng, campaign.pk, labels, next_original, next_candidate, counterfactuals - made
        )
        next_original += len(originals)
        next_candidate += len(candidates)
        made += len(candidates)
        with transaction.atomic():
            insert_original(originals)
            insert_candidate(candidates)
            insert_aggregate(aggregates)
        if progress:
            _progress(made, counterfactuals, started)
    _sequences_reset()
    return campaign


def _campaign_create(owner, rng: random.Random):
    """The campaign and its two labels: (campaign, the labels' ids)."""
    from django.utils.text import slugify

    from cfannotate.campaigns.models import Campaign, CampaignLabel, TaskType

    # Made directly, not by campaign_create: its generator check imports the ML stack
    # (torch, transformers, spaCy: ~400 MB resident) that an export never needs.
    name = f"Export benchmark {rng.randrange(10**6)}"
    campaign = Campaign.objects.create(
        owner=owner,
        name=name,
        slug=slugify(name),
        task_type=TaskType.SENTIMENT,
        judgments_per_candidate=VOTES,
    )
    labels = [
        CampaignLabel.objects.create(
            campaign=campaign, value=value, display_name=value.title(), position=position
        ).pk
        for position, value in enumerate(("negative", "positive"))
    ]
    return campaign, labels


def _inserts() -> tuple[_Insert, _Insert, _Insert]:
    """The bulk inserts of originals, candidates and aggregated labels."""
    from cfannotate.campaigns.models import Original
    from cfannotate.candidates.models import Candidate
    from cfannotate.quality.models import AggregatedLabel

    insert_original = _Insert(Original, ("id", "campaign_id", "external_id", "text", "label_id"))
    insert_candidate = _Insert(
        Candidate,
        (
            "id",
            "campaign_id",
            "original_id",
            "text",
            "source",
            "generator",
            "control_code",
            "edit",
            "status",
        ),
    )
    insert_aggregate = _Insert(
        AggregatedLabel,
        ("candidate_id", "label_id", "is_valid", "kept", "votes", "qualified_votes", "agreement"),
    )
    return insert_original, insert_candidate, insert_aggregate


def _batch_rows(
    rng: random.Random,
    campaign_id: int,
    labels: list[int],
    next_original: int,
    next_candidate: int,
    wanted: int,
) -> tuple[list[tuple], list[tuple], list[tuple]]:
    """Up to BATCH_ORIGINALS originals with PER_ORIGINAL counterfactuals each, at most
    `wanted` counterfactuals in all, numbered from the ids given: (originals, candidates,
    aggregated labels)."""
    originals, candidates, aggregates = [], [], []
    for _ in range(BATCH_ORIGINALS):
        if len(candidates) >= wanted:
            break
        text = (
            f"Review {next_original}: the film was {rng.choice(WORDS)} and "
            f"{rng.choice(WORDS)}, with a {rng.choice(WORDS)} ending."
        )
        originals.append(
            (next_original, campaign_id, f"x{next_original}", text, rng.choice(labels))
        )
        for position in range(min(PER_ORIGINAL, wanted - len(candidates))):
            candidate, aggregate = _counterfactual_rows(
                rng, campaign_id, labels, next_original, next_candidate, text, position
            )
            candidates.append(candidate)
            aggregates.append(aggregate)
            next_candidate += 1
        next_original += 1
    return originals, candidates, aggregates


def _counterfactual_rows(
    rng: random.Random,
    campaign_id: int,
    labels: list[int],
    original_id: int,
    candidate_id: int,
    text: str,
    position: int,
) -> tuple[tuple, tuple]:
    """One counterfactual of an original, and its aggregated label: (candidate, aggregate)."""
    from cfannotate.candidates.models import CandidateSource, CandidateStatus

    removed, added = rng.sample(WORDS, 2)
    candidate = (
        candidate_id,
        campaign_id,
        original_id,
        f"{text} Variant {position}: not {added}.",
        CandidateSource.GENERATED,
        "polyjuice",
        rng.choice(CODES),
        {"ops": [{"removed_tokens": [removed], "added_tokens": ["not", added]}]},
        CandidateStatus.SELECTED,
    )
    # Most counterfactuals are valid and agreed on; about half flip the label.
    kept = rng.random() < 0.85
    agreeing = VOTES if rng.random() < 0.7 else VOTES - 1
    aggregate = (
        candidate_id,
        rng.choice(labels),
        kept or rng.random() < 0.5,
        kept,
        VOTES,
        VOTES,
        agreeing / VOTES,
    )
    return candidate, aggregate


def _sequences_reset() -> None:
    """Ids were given explicitly; PostgreSQL's sequences must learn of them."""
    from django.core.management.color import no_style
    from django.db import connection

    from cfannotate.campaigns.models import Original
    from cfannotate.candidates.models import Candidate

    with connection.cursor() as cursor:
        for statement in connection.ops.sequence_reset_sql(no_style(), [Original, Candidate]):
            cursor.execute(statement)


# -- the two exports -------------------------------------------------------------------


def _counted(rows: Iterable[dict], counter: list[int]) -> Iterator[dict]:
    for row in rows:
        counter[0] += 1
        yield row


def streamed(campaign, format: str) -> Callable[[_NullSink], int]:
    """Ours: the export file as the download streams it."""
    from cfannotate.exports.files import export_prepare

    def run(sink: _NullSink) -> int:
        export = export_prepare(campaign=campaign, kind="contrast", format=format)
        counter = [0]
        for chunk in export.chunks(_counted(export.rows(), counter)):
            sink.write(chunk)
        return counter[0]

    return run


def listed(campaign) -> Callable[[_NullSink], int]:
    """Baseline: every row through the ORM into a list, dumped, joined, written at once."""
    from django.db.models import F

    from cfannotate.exports.selectors import COUNTERFACTUAL_COLUMNS, edit_tokens
    from cfannotate.quality.models import AggregatedLabel

    def run(sink: _NullSink) -> int:
        aggregates = list(
            AggregatedLabel.objects.filter(candidate__campaign=campaign, kept=True)
            .exclude(label_id=F("candidate__original__label_id"))
            .select_related("label", "candidate__original__label", "candidate__predicted_label")
            .order_by("candidate__original_id", "candidate_id")
        )
        lines = []
        for aggregate in aggregates:
            candidate, original = aggregate.candidate, aggregate.candidate.original
            row = {
                "original_id": original.external_id,
                "candidate_id": candidate.id,
                "context": original.context,
                "original_text": original.text,
                "text": candidate.text,
                "original_label": original.label.value,
                "label": aggregate.label.value,
                "generator": candidate.generator,
                "engine": candidate.metadata.get("engine"),
                "model": candidate.metadata.get("model"),
                "control_code": candidate.control_code,
                "removed_tokens": edit_tokens(candidate.edit, "removed"),
                "added_tokens": edit_tokens(candidate.edit, "added"),
                "votes": aggregate.votes,
                "qualified_votes": aggregate.qualified_votes,
                "label_votes": aggregate.label_votes,
                "valid_votes": aggregate.valid_votes,
                "agreement": aggregate.agreement if math.isfinite(aggregate.agreement) else None,
                "predicted_label": (
                    candidate.predicted_label.value if candidate.predicted_label else None
                ),
                "predicted_confidence": candidate.predicted_confidence,
            }
            assert tuple(row) == COUNTERFACTUAL_COLUMNS
            lines.append(json.dumps(row, ensure_ascii=False, allow_nan=False))
        sink.write("\n".join(lines) + "\n" if lines else "")
        return len(lines)

    return run


@dataclass(frozen=True)
class ExportResult:
    jsonl: Measure
    csv: Measure
    baseline: Measure
    counterfactuals: int

    @property
    def ratio(self) -> float:
        return self.jsonl.rows_per_s / self.baseline.rows_per_s if self.baseline.rows_per_s else 0

    @property
    def identical(self) -> bool:
        return self.jsonl.digest == self.baseline.digest and self.jsonl.rows == self.baseline.rows

    def result_line(self) -> str:
        return (
            f"RESULT export rows_per_s={self.jsonl.rows_per_s:.0f} "
            f"peak_mb={max(self.jsonl.peak_mb, self.csv.peak_mb):.1f} ratio={self.ratio:.2f} "
            f"csv_rows_per_s={self.csv.rows_per_s:.0f} "
            f"baseline_rows_per_s={self.baseline.rows_per_s:.0f} "
            f"baseline_peak_mb={self.baseline.peak_mb:.1f} rows={self.jsonl.rows} "
            f"judgments={self.counterfactuals * VOTES}"
        )


def run_exports(campaign, counterfactuals: int) -> ExportResult:
    """Ours first (JSONL, CSV), the baseline last: its list would inflate what follows."""
    jsonl = measure("streamed jsonl", streamed(campaign, "jsonl"))
    csv = measure("streamed csv", streamed(campaign, "csv"))
    baseline = measure("listed jsonl (baseline)", listed(campaign))
    return ExportResult(jsonl=jsonl, csv=csv, baseline=baseline, counterfactuals=counterfactuals)


def _django_setup(state_dir: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cfannotate.settings")
    os.environ["CFANNOTATE_STATE_DIR"] = state_dir
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_COUNTERFACTUALS:,} counterfactuals, figures extrapolated to a million",
    )
    parser.add_argument("--counterfactuals", type=int, default=None)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    counterfactuals = args.counterfactuals or (
        QUICK_COUNTERFACTUALS if args.quick else FULL_COUNTERFACTUALS
    )

    with tempfile.TemporaryDirectory(prefix="cfannotate-export-bench-") as state_dir:
        _django_setup(state_dir)
        from django.conf import settings
        from django.contrib.auth import get_user_model

        engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
        print(f"database: {engine}; {counterfactuals:,} counterfactuals x {VOTES} votes")
        started = time.perf_counter()
        owner = get_user_model().objects.create_user(f"export-bench-{os.getpid()}")
        campaign = populate(owner=owner, counterfactuals=counterfactuals, seed=args.seed)
        print(f"populated in {time.perf_counter() - started:.1f} s")
        result = run_exports(campaign, counterfactuals)

    for item in (result.jsonl, result.csv, result.baseline):
        print(
            f"{item.name:24} {item.rows:>8,} rows in {item.seconds:6.2f} s = "
            f"{item.rows_per_s:>9,.0f} rows/s; peak RSS {item.peak_mb:6.1f} MB "
            f"(+{item.growth_mb:.1f} MB during the export)"
        )
    print(f"same bytes as the baseline: {'yes' if result.identical else 'NO'}")
    if counterfactuals < FULL_COUNTERFACTUALS:
        scale = FULL_COUNTERFACTUALS / counterfactuals
        print(
            f"extrapolated to 1,000,000 judgments (x{scale:.1f}, linear): "
            f"~{result.jsonl.rows * scale:,.0f} rows, "
            f"~{result.jsonl.seconds * scale:.0f} s streamed, "
            f"~{result.baseline.seconds * scale:.0f} s listed; the streamed peak stays flat, "
            f"the listed one grows with the rows (~{result.baseline.growth_mb * scale:,.0f} MB)"
        )
    print(result.result_line())
    if not result.identical:
        sys.exit("the streamed export and the baseline wrote different bytes")


if __name__ == "__main__":
    main()
