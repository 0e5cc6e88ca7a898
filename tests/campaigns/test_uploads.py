"""Uploading a dataset of originals: reading the file, guessing and checking the column
mapping, previewing, and importing every row or none."""

import codecs

import pytest

from cfannotate.campaigns.models import Original, TaskType
from cfannotate.campaigns.services import MAX_TEXT_CHARS, originals_import
from cfannotate.campaigns.uploads import (
    _same_text_rows,
    mapping_from,
    mapping_guess,
    originals_upload,
    upload_preview,
)
from cfannotate.core.exceptions import InvalidInput
from tests.factories import make_campaign


@pytest.fixture
def nli(researcher):
    return make_campaign(owner=researcher, task_type=TaskType.NLI, name="NLI")


def preview(campaign, content: bytes | str, name: str = "data.csv", mapping=None):
    if isinstance(content, str):
        content = content.encode("utf-8")
    return upload_preview(campaign=campaign, file_name=name, content=content, mapping=mapping)


def upload(campaign, content, name="data.csv", mapping=None) -> int:
    return originals_upload(campaign=campaign, preview=preview(campaign, content, name, mapping))


def test_a_sentiment_csv_is_mapped_by_its_header_and_imported_with_extra_columns(campaign):
    content = (
        "Review,Sentiment,source\n"
        'It was great.,Positive,imdb\n"Dull, long and loud.",neg,imdb\n\n'
        "Fine film.,1,rt\n"
    )
    result = preview(campaign, content)
    assert result.mapping == {"id": None, "text": "Review", "label": "Sentiment"}
    assert result.table.format == "csv" and result.rows == 3 and result.importable
    assert [(s.spelling, s.rows, s.label.value) for s in result.labels] == [
        ("Positive", 1, "positive"),
        ("neg", 1, "negative"),
        ("1", 1, "positive"),
    ]
    assert originals_upload(campaign=campaign, preview=result) == 3
    rows = list(campaign.originals.order_by("id").values_list("external_id", "text", "extra"))
    assert rows == [
        ("row-1", "It was great.", {"source": "imdb"}),
        ("row-2", "Dull, long and loud.", {"source": "imdb"}),
        ("row-3", "Fine film.", {"source": "rt"}),
    ]


@pytest.mark.parametrize(
    "header, expected",
    [
        # SNLI / the CAD NLI files
        (
            ["sentence1", "sentence2", "gold_label", "pairID"],
            {"id": "pairID", "context": "sentence1", "text": "sentence2", "label": "gold_label"},
        ),
        (
            ["Premise", "Hypothesis", "label"],
            {"id": None, "context": "Premise", "text": "Hypothesis", "label": "label"},
        ),
        # QQP (GLUE)
        (
            ["id", "qid1", "qid2", "question1", "question2", "is_duplicate"],
            {"id": "id", "context": "question1", "text": "question2", "label": "is_duplicate"},
        ),
        # MRPC: its label column, "Quality", is too vague a name to guess
        (
            ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"],
            {"id": None, "context": "#1 String", "text": "#2 String", "label": None},
        ),
    ],
)
def test_pair_task_guesses(nli, header, expected):
    assert mapping_guess(nli, header) == expected


def test_single_text_guesses_do_not_take_a_batch_id_for_the_id(campaign):
    # The header of the CAD sentiment files.
    assert mapping_guess(campaign, ["Sentiment", "Text", "batch_id"]) == {
        "id": None,
        "text": "Text",
        "label": "Sentiment",
    }
    assert mapping_guess(campaign, ["a", "b"]) == {"id": None, "text": None, "label": None}


def test_a_tsv_of_an_nli_task_is_imported_with_premise_and_hypothesis(nli):
    content = (
        "sentence1\tsentence2\tgold_label\n"
        "A man sleeps.\tA person rests.\tentailment\n"
        "A man sleeps.\tA man runs.\tcontradiction\n"
    )
    assert upload(nli, content, "snli.tsv") == 2
    first = nli.originals.order_by("id").first()
    assert (first.context, first.text, first.label.value) == (
        "A man sleeps.",
        "A person rests.",
        "entailment",
    )


def test_rows_with_the_text_of_originals_already_there_are_counted_not_refused(
    campaign, django_assert_num_queries
):
    """A file without ids uploaded twice imports every row twice: the preview says so."""
    content = "review,sentiment\nIt was great.,positive\nDull.,negative\n"
    first = preview(campaign, content)
    assert (first.same_text_rows, first.same_text_note) == (0, "")
    originals_upload(campaign=campaign, preview=first)

    again = preview(campaign, content + "New one.,positive\n")

    assert again.importable and again.same_text_rows == 2
    assert again.same_text_note == (
        "2 of 3 rows have the same text as originals already in this campaign; "
        "importing adds them again."
    )
    assert originals_upload(campaign=campaign, preview=again) == 3  # warned, not refused
    with django_assert_num_queries(1):
        assert _same_text_rows(campaign, again.originals) == 3


def test_a_pair_tasks_rows_are_the_same_only_with_the_same_context(nli):
    upload(nli, "sentence1,sentence2,gold_label\nA man sleeps.,A man rests.,entailment\n")
    content = (
        "sentence1,sentence2,gold_label\n"
        "A man sleeps.,A man rests.,neutral\n"  # the same pair, another label
        "A dog sleeps.,A man rests.,entailment\n"  # another premise
    )

    result = preview(nli, content)

    assert result.same_text_rows == 1
    assert result.same_text_note.startswith(
        "1 of 2 rows has the same premise and hypothesis as originals already"
    )


def test_missing_columns_are_a_mapping_problem_not_a_crash(campaign, nli):
    result = preview(campaign, "foo,bar\nx,y\n")
    assert result.problems == {
        "text": "Choose the column that holds the sentence.",
        "label": "Choose the column that holds the label.",
    }
    assert not result.importable
    with pytest.raises(InvalidInput, match="Map the file's columns first") as caught:
        originals_upload(campaign=campaign, preview=result)
    assert set(caught.value.fields) == {"mapping.text", "mapping.label"}
    # A pair task also needs its context column.
    pair = preview(nli, "hypothesis,label\nA man runs.,neutral\n")
    assert pair.problems == {"context": "Choose the column that holds the premise."}
    assert not Original.objects.exists()


def test_the_researcher_mapping_overrides_the_guesses(campaign):
    content = "text,comment,label\nGuessed.,Chosen.,positive\n"
    result = preview(campaign, content, mapping={"text": "comment"})
    assert result.mapping["text"] == "comment"
    assert upload(campaign, content, mapping={"text": "comment"}) == 1
    original = campaign.originals.get()
    # The unmapped column named like a field is kept, under a name that is not a field.
    assert original.text == "Chosen." and original.extra == {"text_column": "Guessed."}


def test_an_unmapped_id_column_beside_an_id_column_column_loses_no_value(campaign):
    content = "text,label,id,id_column,id_column_2\nGood.,positive,a,b,c\n"
    assert upload(campaign, content, mapping={"id": None}) == 1
    assert campaign.originals.get().extra == {
        "id_column": "b",
        "id_column_2": "c",
        "id_column_3": "a",
    }


def test_a_mapping_that_does_not_fit_the_file_is_refused(campaign):
    columns = ["review", "stars"]
    with pytest.raises(InvalidInput) as caught:
        mapping_from(campaign, columns, {"text": "nope", "context": "review", "colour": "x"})
    assert caught.value.fields["mapping.text"] == [
        "The file has no column 'nope'; its columns are 'review', 'stars'."
    ]
    # A single-text task has no context to map.
    assert set(caught.value.fields) == {"mapping.text", "mapping.context", "mapping.colour"}
    twice = preview(campaign, "review,stars\nOk.,5\n", mapping={"label": "review"})
    assert twice.problems == {"label": "The column 'review' is already the sentence."}


def test_unknown_labels_are_summarized_and_reported_per_row(campaign):
    content = "text,label\nGood.,positive\nBad.,NEG\nMeh.,neutral\nHm.,neutral\nEh.,\n"
    result = preview(campaign, content)
    summary = {s.spelling: (s.rows, s.label and s.label.value) for s in result.labels}
    assert summary == {
        "neutral": (2, None),
        "positive": (1, "positive"),
        "NEG": (1, "negative"),
        "": (1, None),
    }
    assert set(result.errors) == {"row 4", "row 5", "row 6"}
    assert result.errors["row 4"] == [
        "label ('label'): Unknown label 'neutral'; expected one of negative, positive."
    ]
    with pytest.raises(InvalidInput, match=r"^3 rows are invalid; nothing was imported\.$"):
        originals_upload(campaign=campaign, preview=result)
    assert not campaign.originals.exists()


def test_duplicate_ids_in_the_file_and_against_the_campaign(campaign):
    originals_import(campaign=campaign, records=[{"id": "a1", "text": "Old.", "label": "pos"}])
    content = "id,text,label\na2,One.,pos\na2,Two.,neg\na1,Three.,neg\n"
    result = preview(campaign, content)
    assert result.errors == {
        "row 3": ["id ('id'): The id 'a2' is used twice."],
        "row 4": ["id ('id'): The id 'a1' is already an original of this campaign."],
    }
    assert campaign.originals.count() == 1


def test_empty_overlong_and_non_text_cells(campaign):
    long = "x" * (MAX_TEXT_CHARS + 1)
    lines = [
        '{"text": "  ", "label": "positive"}',
        f'{{"text": "{long}", "label": "positive"}}',
        '{"text": ["a", "list"], "label": "positive"}',
        '{"id": "' + "i" * 201 + '", "text": "Fine.", "label": "positive"}',
        '{"text": "Fine.", "label": "negative", "meta": {"kept": "as-is"}}',
    ]
    result = preview(campaign, "\n".join(lines), "data.jsonl")
    assert result.errors == {
        "line 1": ["text ('text'): The text is empty."],
        "line 2": ["text ('text'): The text has 10,001 characters; the limit is 10,000."],
        "line 3": ["text ('text'): Must be text or a number, not a list or an object."],
        "line 4": ["id ('id'): The id has 201 characters; the limit is 200."],
    }
    assert upload(campaign, lines[4], "ok.jsonl") == 1
    assert campaign.originals.get().extra == {"meta": {"kept": "as-is"}}


def test_bad_json_lines_are_reported_with_their_numbers(campaign):
    content = (
        '{"text": "Good.", "label": "positive"}\n'
        "{text: unquoted}\n"
        "\n"
        '["not", "an object"]\n'
        '{"text": "Nul \\u0000 inside.", "label": "positive"}\n'
        '{"text": "Fine.", "label": "negative"}\n'
    )
    result = preview(campaign, content, "data.jsonl")
    assert result.rows == 2
    assert result.errors["line 2"] == [
        "Not valid JSON: Expecting property name enclosed in double quotes (character 2)."
    ]
    assert result.errors["line 4"] == ["Each line must be a JSON object, {...}."]
    assert "NUL character" in result.errors["line 5"][0]
    assert list(result.errors) == ["line 2", "line 4", "line 5"]
    with pytest.raises(InvalidInput):
        originals_upload(campaign=campaign, preview=result)
    assert not campaign.originals.exists()


def test_a_json_file_of_one_array_says_each_line_must_be_an_object(campaign):
    content = '[{"text": "Good.", "label": "positive"}, {"text": "Bad.", "label": "negative"}]\n'
    with pytest.raises(InvalidInput) as caught:
        preview(campaign, content, "data.json")
    assert caught.value.message == (
        "1 row is invalid; the file has no columns to map, so nothing was imported."
    )
    assert caught.value.fields == {"line 1": ["Each line must be a JSON object, {...}."]}


def test_ragged_rows_are_errors_whichever_way_they_are_ragged(campaign):
    content = "text,label\nGood.,positive\nToo, many,negative\nToo few\nFine.,negative\n"
    result = preview(campaign, content)
    assert result.errors == {
        "row 3": ["3 cells but 2 columns; quote cells that hold a comma."],
        "row 4": [
            "1 cells but 2 columns; every row needs a cell for each column, even an empty one."
        ],
    }
    assert result.rows == 2 and not result.importable


def test_broken_quoting_stops_at_its_row(campaign):
    result = preview(campaign, 'text,label\n"Good.",positive\n"Open quote,negative\n')
    assert "Not valid CSV" in result.errors["row 3"][0] and result.rows == 1


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "The file has no rows"),
        ("\n\n", "The file has no rows"),
        ("text,label\n", "The file has a header but no rows"),
        ("text,label\n,\n \n", "The file has a header but no rows"),
    ],
)
def test_empty_and_header_only_files(campaign, content, message):
    with pytest.raises(InvalidInput, match=message):
        preview(campaign, content)


def test_a_header_naming_a_column_twice_is_refused(campaign):
    with pytest.raises(InvalidInput, match=r"'text' twice \(columns 1 and 3\)") as caught:
        preview(campaign, "text,label,text\nA.,positive,B.\n")
    assert "columns" in caught.value.fields


def test_blank_header_cells_get_their_position_as_name(campaign):
    result = preview(campaign, "text,label,\nGood.,positive,\n")
    assert result.table.columns == ["text", "label", "column 3"]
    assert upload(campaign, "text,label,\nGood.,positive,\n") == 1


def test_latin1_is_refused_as_a_whole_naming_the_byte_its_line_and_the_fix(campaign):
    content = "text,label\nTrès bien.,positive\nFine.,negative\nDéjà vu.,positive\n"
    with pytest.raises(InvalidInput) as caught:
        preview(campaign, content.encode("latin-1"))
    assert caught.value.message == (
        "The file is not UTF-8 text: line 2 has the byte 0xE8 ('è' in Windows-1252 or "
        "Latin-1, which the file was likely saved in). To fix it, save the file as UTF-8 "
        "(in Excel: Save As → CSV UTF-8 (Comma delimited)), then upload it again. "
        "Nothing was imported."
    )
    assert caught.value.fields["line 2"] == [
        "Byte 0xE8 ('è' in Windows-1252) at character 3 of the line (byte offset 13 of the "
        "file), in “Très bien.,positive”."
    ]
    assert list(caught.value.fields) == ["file", "line 2", "line 4"]


def test_utf8_with_bom_and_utf16_with_bom_are_read(campaign):
    text = "text\tlabel\nDéjà vu, très bien.\tpositive\n"
    for content in (
        codecs.BOM_UTF8 + text.encode("utf-8"),
        codecs.BOM_UTF16_LE + text.encode("utf-16-le"),
        codecs.BOM_UTF16_BE + text.encode("utf-16-be"),
    ):
        result = preview(campaign, content, "excel.tsv")
        assert result.table.columns == ["text", "label"]
        assert result.sample[0].values["text"] == "Déjà vu, très bien."
    assert result.table.encoding == "utf-16"


def test_utf16_without_bom_and_binary_files_are_refused(campaign):
    with pytest.raises(InvalidInput, match=r"NUL byte at byte offset 1 \(line 1\): it is UTF-16"):
        preview(campaign, "text,label\nA,positive\n".encode("utf-16-le"))
    with pytest.raises(InvalidInput, match="Excel workbook"):
        preview(campaign, b"PK\x03\x04\x14\x00rest-of-zip", "data.xlsx")


def test_formula_looking_cells_are_kept_as_text(campaign):
    content = 'text,label,note\n=SUM(A1:A2),positive,"=HYPERLINK(""x"")"\n+1 great,negative,@cmd\n'
    assert upload(campaign, content) == 2
    rows = list(campaign.originals.order_by("id").values_list("text", "extra"))
    assert rows == [
        ("=SUM(A1:A2)", {"note": '=HYPERLINK("x")'}),
        ("+1 great", {"note": "@cmd"}),
    ]


def test_row_and_size_limits_come_from_settings(campaign, settings):
    settings.UPLOAD_MAX_ROWS = 2
    with pytest.raises(InvalidInput, match="more than 2 rows; the limit is 2 per file"):
        preview(campaign, "text,label\nA,positive\nB,positive\nC,positive\n")
    settings.UPLOAD_MAX_BYTES = 30
    at_the_limit = "text,label\nA fine film...,pos\n"
    assert len(at_the_limit) == 30 and preview(campaign, at_the_limit).importable
    with pytest.raises(InvalidInput, match="31 bytes; the limit is 30"):
        preview(campaign, at_the_limit + "\n")


def test_only_the_first_50_row_errors_are_listed(campaign):
    content = "text,label\n" + "x,neutral\n" * 60
    result = preview(campaign, content)
    with pytest.raises(InvalidInput) as caught:
        originals_upload(campaign=campaign, preview=result)
    assert caught.value.message == (
        "60 rows are invalid; nothing was imported. Only the first 50 are listed."
    )
    assert len(caught.value.fields) == 50 and "row 51" in caught.value.fields
