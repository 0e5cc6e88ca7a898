"""Export files: checked requests, names, formula-safe CSV, loadable JSONL, flat memory."""

import csv
import io
import json
import tracemalloc

import pytest

from cfannotate.campaigns.models import Original
from cfannotate.candidates.models import Candidate
from cfannotate.core.exceptions import InvalidInput
from cfannotate.exports import formats, selectors
from cfannotate.exports.files import export_prepare
from cfannotate.quality.models import AggregatedLabel
from tests.factories import make_original

KINDS = ["contrast", "augmentation", "judgments"]


def text_of(export) -> str:
    return "".join(export.chunks())


def test_files_are_named_after_the_campaign_and_default_to_jsonl(campaign):
    assert export_prepare(campaign=campaign, kind="contrast").filename == (
        f"{campaign.slug}-contrast.jsonl"
    )
    csv_export = export_prepare(campaign=campaign, kind="augmentation", format="csv")
    assert csv_export.filename == f"{campaign.slug}-augmentation.csv"
    assert csv_export.content_type == "text/csv; charset=utf-8"
    gold = export_prepare(campaign=campaign, kind="judgments", include_gold=True)
    assert gold.filename == f"{campaign.slug}-judgments-with-gold.jsonl"


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        ({"kind": "everything"}, "Unknown export 'everything'; choose one of: contrast, "),
        (
            {"kind": "contrast", "format": "xlsx"},
            "Unknown format 'xlsx'; choose one of: jsonl, csv",
        ),
        ({"kind": "contrast", "include_gold": True}, "only be added to the judgments export"),
    ],
)
def test_what_cannot_be_exported_is_refused_with_the_choices(campaign, request_, message):
    with pytest.raises(InvalidInput, match=message):
        export_prepare(campaign=campaign, **request_)


def test_an_empty_campaign_exports_a_header_only_csv_and_an_empty_jsonl(campaign):
    assert text_of(export_prepare(campaign=campaign, kind="contrast")) == ""
    header = text_of(export_prepare(campaign=campaign, kind="contrast", format="csv"))
    assert header.startswith("original_id,candidate_id,context,") and header.count("\n") == 1


def test_csv_neutralizes_all_six_formula_triggers_and_jsonl_keeps_the_text(labeled):
    a1, b1 = labeled.candidates["a1"], labeled.candidates["b1"]
    Original.objects.filter(pk=labeled.originals["A"].pk).update(
        text="-2+3 stars", context="\tindented premise"
    )
    Original.objects.filter(pk=labeled.originals["B"].pk).update(text="\r=cmd|' /C calc'!A0")
    Candidate.objects.filter(pk=a1.pk).update(text='=HYPERLINK("http://evil")', generator="@gen")
    Candidate.objects.filter(pk=b1.pk).update(text="+SUM(A1:A9)")

    text = text_of(export_prepare(campaign=labeled.campaign, kind="contrast", format="csv"))
    reader = csv.DictReader(io.StringIO(text, newline=""))
    row_a1, row_b1 = list(reader)

    assert reader.fieldnames[:5] == [
        "original_id",
        "candidate_id",
        "context",
        "original_text",
        "text",
    ]
    assert row_a1["original_text"] == "'-2+3 stars"
    assert row_a1["context"] == "'\tindented premise"
    assert row_a1["text"] == '\'=HYPERLINK("http://evil")'
    assert row_a1["generator"] == "'@gen"
    assert row_b1["original_text"] == "'\r=cmd|' /C calc'!A0"
    assert row_b1["text"] == "'+SUM(A1:A9)"
    assert row_a1["agreement"] == "1.0" and row_a1["votes"] == "3"

    jsonl = text_of(export_prepare(campaign=labeled.campaign, kind="contrast"))
    assert json.loads(jsonl.splitlines()[0])["text"] == '=HYPERLINK("http://evil")'


@pytest.mark.parametrize("kind", KINDS)
def test_jsonl_lines_share_keys_and_types_as_a_json_dataset_loader_needs(labeled, kind):
    export = export_prepare(campaign=labeled.campaign, kind=kind, include_gold=kind == "judgments")
    text = text_of(export)

    assert "NaN" not in text and "Infinity" not in text
    records = [json.loads(line) for line in text.splitlines()]
    assert records and {tuple(record) for record in records} == {export.kind.columns}
    for column in export.kind.columns:
        types = {type(record[column]) for record in records if record[column] is not None}
        assert len(types) == 1, f"{column} mixes {types}"


@pytest.mark.parametrize("kind", KINDS)
def test_jsonl_loads_with_the_datasets_library(labeled, kind, tmp_path):
    import datasets  # a test dependency: the reader researchers load exports with

    path = tmp_path / f"{kind}.jsonl"
    export = export_prepare(campaign=labeled.campaign, kind=kind, include_gold=kind == "judgments")
    path.write_text(text_of(export), encoding="utf-8")

    loaded = datasets.load_dataset(
        "json", data_files=str(path), split="train", cache_dir=str(tmp_path / "cache")
    )

    assert loaded.column_names == list(export.kind.columns)
    assert loaded.num_rows == len(path.read_text(encoding="utf-8").splitlines())
    assert str(loaded.features["candidate_id"].dtype) == "int64"


def test_a_large_export_streams_in_flat_memory(campaign, monkeypatch):
    monkeypatch.setattr(selectors, "CHUNK_SIZE", 50)
    monkeypatch.setattr(formats, "LINES_PER_CHUNK", 50)
    original = make_original(campaign, label="negative")
    positive = campaign.labels.get(value="positive")
    filler = "word " * 200

    def add(start: int, count: int) -> None:
        candidates = Candidate.objects.bulk_create(
            Candidate(campaign=campaign, original=original, text=f"{n} {filler}", generator="test")
            for n in range(start, start + count)
        )
        AggregatedLabel.objects.bulk_create(
            AggregatedLabel(
                candidate=candidate, label=positive, is_valid=True, kept=True, votes=2,
                qualified_votes=2, label_votes={"negative": 0, "positive": 2}, valid_votes=2,
                agreement=1.0,
            )
            for candidate in candidates
        )  # fmt: skip

    def peak_and_sent() -> tuple[int, int]:
        sent = 0
        tracemalloc.start()
        try:
            for chunk in export_prepare(campaign=campaign, kind="contrast").chunks():
                sent += len(chunk)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        return peak, sent

    add(0, 2000)
    small_peak, small_sent = peak_and_sent()
    add(2000, 6000)
    peak, sent = peak_and_sent()

    # Four times the rows, over 8 MB sent; the memory it takes stays what it was.
    assert sent > 4 * small_sent > 8_000_000
    assert peak < small_peak * 1.3, (
        f"peak {peak} bytes for {sent} sent, {small_peak} for {small_sent}"
    )
    assert peak < sent / 4


@pytest.mark.parametrize("kind", KINDS)
def test_every_row_says_which_engine_and_model_made_its_counterfactual(labeled, kind):
    a1 = labeled.candidates["a1"]
    # Imported or older candidates record no provenance, and free-form metadata is not it.
    Candidate.objects.filter(pk=a1.pk).update(metadata={"engine": ["loop"], "file": "mine.csv"})
    export = export_prepare(
        campaign=labeled.campaign, kind=kind, format="csv", include_gold=kind == "judgments"
    )
    rows = list(csv.DictReader(io.StringIO(text_of(export), newline="")))
    header = list(rows[0])
    assert header.index("engine") == header.index("generator") + 1
    assert header.index("model") == header.index("generator") + 2
    made = [row for row in rows if row["candidate_id"] and row["candidate_id"] != str(a1.id)]
    assert made and {(row["engine"], row["model"]) for row in made} == {("server", "org/served-7b")}
    for row in rows:
        if row["candidate_id"] in ("", str(a1.id)):  # an original's row, or a1
            assert (row["engine"], row["model"]) == ("", "")
