"""Set-based writes and ranged reads of many rows (`cfannotate.core.bulk`)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cfannotate.candidates.models import Candidate
from cfannotate.core import bulk
from tests.factories import make_candidate, make_original

pytestmark = pytest.mark.django_db

FIELDS = ("predicted_label", "predicted_confidence", "prediction_source")


@pytest.fixture
def candidates(campaign):
    original = make_original(campaign)
    return [make_candidate(original) for _ in range(5)]


def _stored(candidates):
    return list(
        Candidate.objects.filter(pk__in=[c.pk for c in candidates])
        .order_by("pk")
        .values_list("pk", "predicted_label_id", "predicted_confidence", "prediction_source")
    )


@pytest.mark.parametrize("from_values", [True, False], ids=["update-from-values", "executemany"])
def test_rows_update_sets_each_rows_values_in_a_statement_a_batch(
    campaign, candidates, monkeypatch, from_values
):
    if from_values and not bulk._updates_from_values():
        pytest.skip("this SQLite has no UPDATE FROM")
    monkeypatch.setattr(bulk, "_updates_from_values", lambda: from_values)
    positive, negative = (campaign.labels.get(value=v) for v in ("positive", "negative"))
    # Floats that a decimal text loses, a NULL, and a column of NULLs alone in a batch.
    rows = [
        (candidates[0].pk, positive.pk, 0.1 + 0.2, "baseline"),
        (candidates[1].pk, negative.pk, 1 / 3, "model"),
        (candidates[2].pk, None, None, ""),
        (candidates[3].pk, positive.pk, 1.0, "uploaded"),
    ]
    with CaptureQueriesContext(connection) as queries:
        assert bulk.rows_update(Candidate, FIELDS, rows, rows_per_statement=2) == 4
    # Two rows a statement (an executemany is logged once, as "2 times: UPDATE …").
    updates = [q for q in queries.captured_queries if "UPDATE" in q["sql"]]
    assert len(updates) == 2
    untouched = (candidates[4].pk, None, None, "")
    assert _stored(candidates) == [*(tuple(row) for row in rows), untouched]


def test_rows_update_of_nothing_sends_nothing(candidates, django_assert_num_queries):
    with django_assert_num_queries(0):
        assert bulk.rows_update(Candidate, FIELDS, []) == 0


def test_rows_update_keeps_within_the_databases_parameters(candidates, monkeypatch):
    monkeypatch.setattr(connection.features, "max_query_params", 9)  # two rows of 4
    rows = [(c.pk, None, 0.5, "baseline") for c in candidates]
    with CaptureQueriesContext(connection) as queries:
        bulk.rows_update(Candidate, FIELDS, rows)
    assert sum("UPDATE" in q["sql"] for q in queries.captured_queries) == 3
    assert {row[2:] for row in _stored(candidates)} == {(0.5, "baseline")}


def test_key_ranges_cover_each_value_once_in_order(campaign):
    originals = [make_original(campaign) for _ in range(5)]
    for original in originals:
        make_candidate(original), make_candidate(original)
    pool = Candidate.objects.filter(campaign=campaign)
    ranges = list(bulk.key_ranges(pool, "original_id", 2))
    ids = [o.pk for o in originals]
    assert ranges == [(ids[0], ids[1]), (ids[2], ids[3]), (ids[4], ids[4])]
    read = [
        list(pool.filter(original_id__gte=first, original_id__lte=last).values_list("pk"))
        for first, last in ranges
    ]
    assert sum(map(len, read)) == 10


def test_batches():
    assert list(bulk.batches(range(5), 2)) == [[0, 1], [2, 3], [4]]
    assert list(bulk.batches([], 3)) == []
