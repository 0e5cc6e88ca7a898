import json
import re
from pathlib import Path

import pytest

from generation.pairs import (
    Pair,
    PairFormatError,
    PairsNotFound,
    find_pair_sources,
    paired_data,
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


@pytest.fixture
def pooled_split(monkeypatch):
    """Sentences split by the annotation pool's workers, whatever the number of texts."""
    from generation import annotation_pool, pairs

    monkeypatch.setattr(pairs, "POOLED_MIN_TEXTS", 1)
    monkeypatch.setattr(pairs, "SPLIT_CHUNK_TEXTS", 2)
    monkeypatch.setenv(annotation_pool.WORKERS_VARIABLE, "2")
    yield
    annotation_pool.shutdown()


def test_the_pool_splits_sentences_as_this_process_does(pooled_split):
    from generation.pairs import SENTENCE_SPLIT_UNUSED, _sentences, split_sentences
    from generation.parsing import load_nlp

    texts = [
        "The movie was great. The acting was fine. I loved it.",
        "Mr. Smith went to Washington, D.C. on Jan. 5. He liked it!",
        "one run-on review without a full stop and with no capitals",
        "Short.",
        "It is what it is... or is it? Yes.",
    ]

    pooled = split_sentences(texts)

    assert pooled == _sentences(load_nlp(exclude=SENTENCE_SPLIT_UNUSED), texts)
    assert pooled[0] == ["The movie was great.", "The acting was fine.", "I loved it."]


def test_cad_sentiment_read_by_the_pool_gives_the_same_pairs(tmp_path, pooled_split):
    test_cad_sentiment_pairs_the_changed_sentences_of_each_batch(tmp_path)


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


# --------------------------------------------------------------------------- rows and folders

NLI_HEADER = ["sentence1", "sentence2", "gold_label"]
CAD_HEADER = ["Sentiment", "Text", "batch_id"]


def write_cad_folder(root: Path, split: str = "train") -> Path:
    """A small CAD layout: sentiment pairs, NLI originals and both kinds of revision."""
    cad = root / "cad"
    for folder in ("sentiment_combined_paired", "NLI_original", "NLI_revised_hypothesis",
                   "NLI_revised_premise"):  # fmt: skip
        (cad / folder).mkdir(parents=True, exist_ok=True)
    _write_tsv(
        cad / "sentiment_combined_paired" / f"{split}_paired.tsv",
        CAD_HEADER,
        ["Positive", "The movie was great.", "1"],
        ["Negative", "The movie was terrible.", "1"],
        ["Negative", "The acting was dull.", "2"],
        ["Positive", "The acting was lively.", "2"],
    )
    _write_tsv(
        cad / "NLI_original" / f"{split}.tsv",
        NLI_HEADER,
        ["A boy kicks a ball.", "A boy is playing soccer.", "entailment"],
    )
    _write_tsv(
        cad / "NLI_revised_hypothesis" / f"{split}.tsv",
        NLI_HEADER,
        ["A boy kicks a ball.", "A boy is sleeping.", "contradiction"],
    )
    _write_tsv(
        cad / "NLI_revised_premise" / f"{split}.tsv",
        NLI_HEADER,
        ["A boy sleeps in bed.", "A boy is playing soccer.", "contradiction"],
    )
    return cad


def test_find_pair_sources_finds_sentiment_and_both_nli_revisions_at_any_depth(tmp_path):
    cad = write_cad_folder(tmp_path)
    write_cad_folder(tmp_path, "dev")

    sources = find_pair_sources(tmp_path)

    assert [(source.name, source.task) for source in sources] == [
        ("cad/sentiment_combined_paired/train", "sentiment"),
        ("cad/NLI_revised_hypothesis/train", "nli"),
        ("cad/NLI_revised_premise/train", "nli"),
    ]
    assert sources[1].paths == (
        cad / "NLI_original" / "train.tsv",
        cad / "NLI_revised_hypothesis" / "train.tsv",
    )
    assert paired_data(tmp_path) == {
        "cad/sentiment_combined_paired/train": [
            Pair("The movie was great.", "The movie was terrible."),
            Pair("The acting was dull.", "The acting was lively."),
        ],
        "cad/NLI_revised_hypothesis/train": [
            Pair("A boy is playing soccer.", "A boy is sleeping.")
        ],
        "cad/NLI_revised_premise/train": [Pair("A boy kicks a ball.", "A boy sleeps in bed.")],
    }
    both = find_pair_sources(cad, ("train", "dev"))
    assert [source.name for source in both][3:] == [
        "sentiment_combined_paired/dev",
        "NLI_revised_hypothesis/dev",
        "NLI_revised_premise/dev",
    ]


def test_a_missing_data_folder_is_named(tmp_path):
    with pytest.raises(PairsNotFound, match=re.escape(f"No such data folder: {tmp_path / 'x'}")):
        find_pair_sources(tmp_path / "x")


def test_a_folder_without_pair_files_says_what_it_looked_for(tmp_path):
    (tmp_path / "notes.txt").write_text("nothing here")
    with pytest.raises(PairsNotFound, match=r"No paired data under .* for split\(s\) train"):
        find_pair_sources(tmp_path)


def test_an_nli_revision_without_its_original_is_refused(tmp_path):
    cad = write_cad_folder(tmp_path)
    (cad / "NLI_original" / "train.tsv").unlink()
    with pytest.raises(PairsNotFound, match="has no original beside it"):
        find_pair_sources(tmp_path)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("Positive\tThe movie was bad.", "2 fields where the header has 3"),
        ("Positive\tThe movie was bad.\t1\textra", "4 fields where the header has 3"),
        ("Positive\t \t1", "empty Text"),
    ],
    ids=["missing-tab", "extra-tab", "empty-text"],
)
def test_a_malformed_row_is_named_by_file_and_line(tmp_path, row, message):
    cad = write_cad_folder(tmp_path)
    path = cad / "sentiment_combined_paired" / "train_paired.tsv"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines[:2], row, *lines[2:]]) + "\n")

    with pytest.raises(PairFormatError, match=re.escape(f"{path}:3: {message}")):
        paired_data(tmp_path)


def test_a_source_that_gives_no_pair_is_an_error(tmp_path):
    cad = write_cad_folder(tmp_path)
    _write_tsv(cad / "sentiment_combined_paired" / "train_paired.tsv", CAD_HEADER)
    with pytest.raises(PairFormatError, match="sentiment_combined_paired/train: no pair"):
        paired_data(tmp_path)
