"""What every filtered, paginated list endpoint of the API does the same way."""

from collections.abc import Iterable

from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cfannotate.core.exceptions import InvalidInput

# The largest id a database key holds (a signed 64-bit integer): a larger one given as a
# filter or in a list is refused as bad input, not sent to the database to overflow there.
MAX_ID = 2**63 - 1


def choice_param(request: Request, name: str, choices: Iterable[str]) -> str | None:
    """The query parameter `name`, None when absent; InvalidInput naming the choices
    when it is not one of them."""
    value = request.query_params.get(name)
    choices = list(choices)
    if value and value not in choices:
        raise InvalidInput(
            f"Unknown {name} {value!r}.",
            fields={name: [f"Choose one of: {', '.join(choices)}."]},
        )
    return value or None


def paginated_response(
    view: APIView, request: Request, queryset, serializer_class, *, rows=None
) -> Response:
    """One page of `queryset` with `view.pagination_class`, serialized; `rows` turns the
    page's objects into what the serializer reads, where they are not that already."""
    paginator = view.pagination_class()
    page = paginator.paginate_queryset(queryset, request, view)
    data = serializer_class(rows(page) if rows else page, many=True).data
    return paginator.get_paginated_response(data)
