import json
import re
from pathlib import Path

import pytest

from generation.pairs import (
    Pair,
    PairFormatError,
    read_cad_nli,
    read_cad_sentiment,
    read_jsonl_pairs,
    read_pairs,
    read_tsv_pairs,
)


def _write_jsonl(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _write_tsv(path: Path, header: list[str], *rows: list[str]) -> Path:
    lines = ["\t".join(header), *("\t".join(row) for row in rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_jsonl_reads_both_key_spellings_and_cleans_the_text(tmp_path):
    path = _write_jsonl(
        tmp_path / "pairs.jsonl",
        json.dumps({"x": "It is great.", "x_hat": "It is not great."}),
        "",
        json.dumps({"original": "Good film.<br /><br />Loved it.", "counterfactual": "Bad  film."}),
        json.dumps({"x": "Ünïcode — fine.", "x_hat": "Ünïcode — bad.", "label": "ignored"}),
    )

    assert read_jsonl_pairs(path) == [
        Pair("It is great.", "It is not great."),
        Pair("Good film. Loved it.", "Bad film."),
        Pair("Ünïcode — fine.", "Ünïcode — bad."),
    ]


def test_jsonl_bad_line_is_named_by_file_and_number(tmp_path):
    path = _write_jsonl(
        tmp_path / "pairs.jsonl",
        json.dumps({"x": "a", "x_hat": "b"}),
        '{"x": "a", "x_hat": ',
    )

    with pytest.raises(PairFormatError, match=re.escape(f"{path}:2: not valid JSON")):
        read_jsonl_pairs(path)


@pytest.mark.parametrize(
    "record",
    [
        {"x": "only one side"},
        {"x_hat": "only the other side"},
        {"x": "a", "x_hat": 3},
        ["x", "x_hat"],
        "x",
    ],
    ids=["no-x-hat", "no-x", "number", "list", "string"],
)
def test_jsonl_line_without_two_strings_is_refused(tmp_path, record):
    path = _write_jsonl(tmp_path / "pairs.jsonl", json.dumps(record))

    with pytest.raises(
        PairFormatError, match=re.escape(f"{path}:1: needs string fields x and x_hat")
    ):
        read_jsonl_pairs(path)


def test_tsv_reads_named_columns(tmp_path):
    path = _write_tsv(
        tmp_path / "pairs.tsv",
        ["id", "before", "after"],
        ["1", "It is great.", "It is not great."],
        ["2", "A  dog<br/>runs.", "Two dogs run."],
    )

    assert read_tsv_pairs(path, x_column="before", x_hat_column="after") == [
        Pair("It is great.", "It is not great."),
        Pair("A dog runs.", "Two dogs run."),
    ]


def test_tsv_missing_column_lists_the_columns_found(tmp_path):
    path = _write_tsv(tmp_path / "pairs.tsv", ["x", "label"], ["It is great.", "pos"])

    with pytest.raises(PairFormatError) as caught:
        read_tsv_pairs(path)

    message = str(caught.value)
    assert "missing column(s) x_hat" in message
    assert "found x, label" in message
    assert str(path) in message


def test_cad_sentiment_pairs_the_changed_sentences_of_each_batch(tmp_path):
    path = _write_tsv(
        tmp_path / "cad.tsv",
        ["Sentiment", "Text", "batch_id"],
        ["Positive", "The movie was great. The acting was fine.<br /><br />I loved it.", "1"],
        ["Negative", "The movie was terrible. The acting was fine.<br /><br />I hated it.", "1"],
        # Sentence counts differ (3 against 2): not aligned, skipped.
        ["Positive", "Good plot. Good cast. Good music.", "2"],
        ["Negative", "Bad plot and bad cast. Bad music.", "2"],
        # Only one side of the batch: skipped.
        ["Positive", "A lonely review.", "3"],
        # Nothing changed: no pairs.
        ["Positive", "Same text here.", "4"],
        ["Negative", "Same text here.", "4"],
    )

    assert read_cad_sentiment(path) == [
        Pair("The movie was great.", "The movie was terrible."),
        Pair("I loved it.", "I hated it."),
    ]


def test_cad_sentiment_skips_reviews_with_too_many_changed_sentences(tmp_path):
    path = _write_tsv(
        tmp_path / "cad.tsv",
        ["Sentiment", "Text", "batch_id"],
        ["Positive", "It was good. It was fun. It was warm.", "7"],
        ["Negative", "It was bad. It was dull. It was cold.", "7"],
    )

    assert len(read_cad_sentiment(path, max_sentences=3)) == 3
    assert read_cad_sentiment(path, max_sentences=2) == []


def test_cad_sentiment_refuses_other_columns(tmp_path):
    path = _write_tsv(tmp_path / "cad.tsv", ["x", "x_hat"], ["a", "b"])

    with pytest.raises(PairFormatError, match="expected CAD sentiment columns"):
        read_cad_sentiment(path)


def test_cad_nli_pairs_each_original_sentence_with_its_revisions(tmp_path):
    header = ["sentence1", "sentence2", "gold_label"]
    original = _write_tsv(
        tmp_path / "original.tsv",
        header,
        ["A boy kicks a ball.", "A boy is playing soccer.", "entailment"],
        ["Friends run a race.", "People are running.", "entailment"],
    )
    revised = _write_tsv(
        tmp_path / "revised.tsv",
        header,
        ["A boy kicks a ball.", "A boy is playing cricket.", "contradiction"],
        ["A boy kicks a ball.", "A boy is playing soccer.", "entailment"],  # unchanged
        ["A premise nobody wrote.", "Something else.", "neutral"],
        ["Friends run a race.", "Nobody is running.", "contradiction"],
    )

    assert read_cad_nli(original, revised) == [
        Pair("A boy is playing soccer.", "A boy is playing cricket."),
        Pair("People are running.", "Nobody is running."),
    ]


def test_cad_nli_can_pair_revised_premises(tmp_path):
    header = ["sentence1", "sentence2", "gold_label"]
    original = _write_tsv(
        tmp_path / "original.tsv", header, ["A boy kicks a ball.", "A boy plays.", "entailment"]
    )
    revised = _write_tsv(
        tmp_path / "revised.tsv", header, ["A boy sleeps.", "A boy plays.", "contradiction"]
    )

    assert read_cad_nli(original, revised, field="sentence1") == [
        Pair("A boy kicks a ball.", "A boy sleeps.")
    ]


def test_cad_nli_refuses_other_columns(tmp_path):
    good = _write_tsv(tmp_path / "good.tsv", ["sentence1", "sentence2"], ["a", "b"])
    bad = _write_tsv(tmp_path / "bad.tsv", ["premise", "hypothesis"], ["a", "b"])

    with pytest.raises(
        PairFormatError, match=re.escape(f"{bad}: expected columns sentence1, sentence2")
    ):
        read_cad_nli(good, bad)


def test_read_pairs_picks_the_reader_by_extension_or_name(tmp_path):
    jsonl = _write_jsonl(tmp_path / "pairs.jsonl", json.dumps({"x": "a b", "x_hat": "a c"}))
    tsv = _write_tsv(tmp_path / "pairs.tsv", ["x", "x_hat"], ["d e", "d f"])
    columns = _write_tsv(tmp_path / "other.txt", ["before", "after"], ["g h", "g i"])
    cad = _write_tsv(
        tmp_path / "cad.tsv",
        ["Sentiment", "Text", "batch_id"],
        ["Positive", "It was good.", "1"],
        ["Negative", "It was bad.", "1"],
    )

    assert read_pairs(jsonl) == [Pair("a b", "a c")]
    assert read_pairs(tsv) == [Pair("d e", "d f")]
    assert read_pairs(tsv, "tsv") == [Pair("d e", "d f")]
    assert read_pairs(columns, x_column="before", x_hat_column="after") == [Pair("g h", "g i")]
    assert read_pairs(cad, "cad-sentiment") == [Pair("It was good.", "It was bad.")]
    # Read as plain TSV, the CAD file has no x column.
    with pytest.raises(PairFormatError, match="missing column"):
        read_pairs(cad)


def test_read_pairs_refuses_an_unknown_format(tmp_path):
    path = _write_jsonl(tmp_path / "pairs.jsonl", json.dumps({"x": "a", "x_hat": "b"}))

    with pytest.raises(PairFormatError, match="Unknown pair format 'csv'"):
        read_pairs(path, "csv")


def test_read_pairs_of_a_missing_file_names_it(tmp_path):
    missing = tmp_path / "nowhere.jsonl"

    with pytest.raises(FileNotFoundError, match=re.escape(str(missing))):
        read_pairs(missing)
