"""`IdsThenRows` pages a list as Paginator pages its queryset: the same pages, the same
rows in the same order, found by a narrow query of ids and one read of the page's rows."""

import pytest
from django.contrib.auth import get_user_model
from django.core.paginator import Paginator
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cfannotate.core.pagination import IdsThenRows, page_of, rows_in_order
from tests.factories import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def users():
    # Names that sort apart from the ids, and a tie broken by the id.
    for name in ["mia", "bo", "al", "zed", "bo2", "cy", "al2"]:
        make_user(name, first_name=name.rstrip("2"))
    return get_user_model().objects.order_by("first_name", "-id")


def test_every_page_is_the_querysets_page(users):
    paged = IdsThenRows(users, rows_in_order(users))
    for per_page in (1, 2, 3, 7, 10):
        plain, ours = Paginator(users, per_page), Paginator(paged, per_page)
        assert ours.count == plain.count == 7 and ours.num_pages == plain.num_pages
        for number in plain.page_range:
            assert list(ours.page(number)) == list(plain.page(number))
        # Out of range and not a number: get_page falls back alike.
        for asked in ("99", "x", None, "-1"):
            assert list(ours.get_page(asked)) == list(plain.get_page(asked))


def test_a_page_is_two_queries_whatever_its_depth(users):
    """Counting aside: the page's ids (sliced in SQL), then its rows by those ids alone."""
    paged = Paginator(IdsThenRows(users, rows_in_order(users)), 2)
    paged.count  # noqa: B018 (counted once, cached by the paginator)
    for number in (1, 4):
        with CaptureQueriesContext(connection) as queries:
            rows = list(paged.page(number))
        assert len(queries) == 2
        ids_query, rows_query = (query["sql"] for query in queries.captured_queries)
        assert "OFFSET" in ids_query or number == 1
        assert "OFFSET" not in rows_query and " IN (" in rows_query
        assert len(rows) == (2 if number < 4 else 1)


def test_an_empty_list_reads_no_rows():
    paged = IdsThenRows(get_user_model().objects.order_by("id"), lambda ids: pytest.fail())
    page = Paginator(paged, 5).get_page(1)
    assert list(page) == [] and page.paginator.count == 0


def test_it_is_read_by_slices_only(users):
    paged = IdsThenRows(users, rows_in_order(users))
    assert paged.ordered and len(paged) == 7
    with pytest.raises(TypeError):
        paged[0]
    # Unordered ids: Paginator warns, as it does for an unordered queryset.
    with pytest.warns(Warning, match="unordered"):
        Paginator(IdsThenRows(users.order_by(), rows_in_order(users)), 2)


def test_an_html_page_number_is_read_strictly(users):
    """`page_of` is `get_page` (past the end: the last page; not a number: the first), but
    `int()`'s other spellings of a number are not numbers: `?page=1_0` is not page 10."""
    for asked, number in [("2", 2), ("99", 4), (None, 1), ("x", 1), ("-1", 1), ("", 1)]:
        assert page_of(users, 2, asked).number == number, asked
    for asked in ("1_0", " 2", "+2", "\u0662", "2.0"):
        assert page_of(users, 2, asked).number == 1, asked


def test_every_html_list_reads_its_page_strictly(client, researcher):
    """The data, review and gold pages (what `page_of` serves): `1_0` is the first page."""
    from django.urls import reverse

    from tests.factories import make_labeling_campaign

    campaign = make_labeling_campaign(units=30, gold=0, training=0)
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    client.force_login(researcher)
    for name, per_page_hint in [
        ("campaign-data", "Page 1 of"),
        ("candidate-review", "Page 1 of"),
        ("gold-page", "Page 1 of"),
    ]:
        html = client.get(reverse(name, args=[campaign.id]), {"page": "1_0"}).content.decode()
        assert per_page_hint in html, name
