"""What a candidate import reads before checking its rows: only the originals the file names,
in a number of queries that does not grow with the campaign."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cfannotate.candidates import imports
from cfannotate.candidates.imports import _ImportIndex, candidates_import
from cfannotate.candidates.uploads import read_candidate_upload
from cfannotate.core.exceptions import InvalidInput
from tests.factories import make_campaign, make_candidate, make_original


def rows_of(*lines: str):
    content = "original_id,text\n" + "".join(f"{line}\n" for line in lines)
    return read_candidate_upload(file_name="c.csv", content=content.encode()).rows


def campaign_of(originals: int):
    campaign = make_campaign()
    made = [make_original(campaign) for _ in range(originals)]
    for original in made:
        make_candidate(original)
        make_candidate(original)
    return campaign, made


def index_queries(campaign, rows) -> tuple[_ImportIndex, int]:
    with CaptureQueriesContext(connection) as queries:
        index = _ImportIndex.of(campaign, rows)
    return index, len(queries.captured_queries)


@pytest.mark.django_db
def test_the_index_holds_only_the_named_originals_in_as_many_queries_for_any_campaign():
    small, small_originals = campaign_of(3)
    large, large_originals = campaign_of(30)
    counts = []
    for campaign, originals in ((small, small_originals), (large, large_originals)):
        named = originals[1]
        index, count = index_queries(
            campaign, rows_of(f"{named.external_id},A new text.", "nobody,Not here.")
        )
        assert set(index.originals) == {named.external_id}
        assert {original for original, _ in index.existing} == {named.pk}
        assert len(index.existing) == 2
        counts.append(count)
    assert counts[0] == counts[1]


@pytest.mark.django_db
def test_many_named_originals_are_read_in_batches_with_the_same_result(monkeypatch):
    campaign, originals = campaign_of(7)
    rows = rows_of(*(f"{original.external_id},Another text." for original in originals))
    whole, whole_count = index_queries(campaign, rows)
    monkeypatch.setattr(imports, "_IMPORT_LOOKUP_BATCH", 3)
    batched, batched_count = index_queries(campaign, rows)
    assert batched.originals == whole.originals and batched.existing == whole.existing
    assert len(batched.originals) == 7 and len(batched.existing) == 14
    assert batched_count == whole_count + 2 * 4  # three batches of four queries, not one


@pytest.mark.django_db
def test_ids_that_are_not_text_are_left_to_the_row_checks():
    campaign, originals = campaign_of(1)
    content = (
        '{"original_id": ["s01"], "text": "A list."}\n'
        '{"original_id": 7, "text": "A number."}\n'
        f'{{"original_id": "{originals[0].external_id}", "text": "Fine."}}\n'
    ).encode()
    rows = read_candidate_upload(file_name="c.jsonl", content=content).rows
    index, _ = index_queries(campaign, rows)
    assert set(index.originals) == {originals[0].external_id}
    with pytest.raises(InvalidInput) as caught:
        candidates_import(campaign=campaign, file_name="c.jsonl", content=content)
    assert "original_id: Must be text" in caught.value.fields["line 1"][0]
    assert "No original '7'" in caught.value.fields["line 2"][0]
