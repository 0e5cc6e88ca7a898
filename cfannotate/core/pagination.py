"""Pages of a long list read in two steps: the page's ids first, then only that page's rows.

A deep page of an OFFSET query sorts every matching row before it skips them. When the
rows are wide (joined models, JSON columns, annotations), that sort spilled hundreds of
megabytes to disk on each request: `/campaigns/1/candidates/?page=4000` of 200,000
candidates took 1.7 s where page 1 took 0.3 s. Sorting and skipping only the ids, from
a narrow query with the same filters and order (which an index can serve), then reading
the 50 rows with those ids, gives the same page for a fraction of that.
"""

from collections.abc import Callable, Iterable, Sequence

from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from rest_framework.exceptions import NotFound
from rest_framework.pagination import PageNumberPagination

from cfannotate.core.form_numbers import is_digits


class IdsThenRows:
    """A list as Django's `Paginator` (and DRF's page-number pagination, which uses it)
    reads one: counted, then sliced. `ids` is the narrow query: the list's filters and
    order, whose primary keys are counted and sliced; `rows_of` turns one slice of ids
    into that page's rows, in the order of the ids it is given.
    """

    def __init__(self, ids: QuerySet, rows_of: Callable[[list], Iterable]) -> None:
        self.ids = ids.values_list("pk", flat=True)
        self.rows_of = rows_of

    @property
    def ordered(self) -> bool:
        # Paginator warns about an unordered list, as it does for a queryset.
        return self.ids.ordered

    def count(self) -> int:
        return self.ids.count()

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, key: slice) -> Sequence:
        if not isinstance(key, slice):
            raise TypeError("IdsThenRows is read a page at a time, by a slice.")
        page = list(self.ids[key])
        return list(self.rows_of(page)) if page else []


def rows_in_order(queryset: QuerySet) -> Callable[[list], QuerySet]:
    """`rows_of` for a queryset whose own order is the ids query's: the page's rows keep it
    (the order must be total, e.g. end with the id, for the two to agree)."""
    return lambda ids: queryset.filter(pk__in=ids)


class PageNumbers(PageNumberPagination):
    """DRF's page numbers, read strictly: `?page=1_0` (which int() reads as 10) or another
    script's digits is "Invalid page" (404, as a page past the end is), not a page."""

    def get_page_number(self, request, paginator):
        number = super().get_page_number(request, paginator)
        if number in self.last_page_strings or is_digits(str(number)):
            return number
        raise NotFound(f"Invalid page {number!r}: a page is a number in plain digits, from 1.")


def page_of(items, per_page: int, number: str | None) -> Page:
    """A page of an HTML list, as `Paginator.get_page` gives it (a page past the end is the
    last one, anything else not a page is the first), but read strictly: `int()` reads
    `?page=1_0` as 10, and another script's digits as numbers too."""
    return Paginator(items, per_page).get_page(number if is_digits(number or "") else None)
