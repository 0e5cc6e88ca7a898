import pytest

from cfannotate.campaigns.datasets import read_jsonl
from cfannotate.core.exceptions import InvalidInput


def test_read_jsonl_skips_blank_lines(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text('{"text": "a", "label": "positive"}\n\n{"text": "b", "label": "negative"}\n')
    assert [r["text"] for r in read_jsonl(path)] == ["a", "b"]


def test_read_jsonl_names_the_bad_lines(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text('{"text": "a"}\n{oops\n[1, 2]\n')
    with pytest.raises(InvalidInput) as error:
        read_jsonl(path)
    assert set(error.value.fields) == {"line 2", "line 3"}
