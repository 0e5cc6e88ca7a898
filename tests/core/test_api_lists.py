"""Every list endpoint pages through `core.api_lists`; one filtered by a choice refuses an
unknown value by name."""

import pytest
from django.urls import reverse
from drf_spectacular.generators import EndpointEnumerator, SchemaGenerator
from rest_framework.settings import api_settings

from cfannotate.core import api_lists

pytestmark = pytest.mark.django_db


def _api_gets() -> list[tuple[str, type, dict]]:
    """(path, view class, JSON schema of the 200 answer) of every GET in the OpenAPI schema."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    views = {
        (path, method): callback.cls
        for path, _, method, callback in EndpointEnumerator().get_api_endpoints()
    }
    gets = []
    for path, operations in schema["paths"].items():
        if "get" not in operations:
            continue
        answer = operations["get"]["responses"].get("200", {}).get("content", {})
        body = answer.get("application/json", {}).get("schema", {})
        if "$ref" in body:
            body = components[body["$ref"].rsplit("/", 1)[-1]]
        gets.append((path, views[(path, "GET")], body))
    return gets


API_GETS = _api_gets()
# A page is an object whose `results` is the list; found in the schema, so a list added
# later is checked without touching this file.
LIST_ROUTES = [
    (path, view) for path, view, body in API_GETS if "results" in body.get("properties", {})
]
PAGE_KEYS = {"count", "next", "previous", "results"}


def test_the_schema_lists_every_paginated_endpoint():
    """Guards the tests below against passing on an empty parametrization."""
    assert len(LIST_ROUTES) >= 8
    assert all(path.startswith("/api/") for path, _ in LIST_ROUTES)


@pytest.mark.parametrize(("path", "view", "body"), API_GETS, ids=[path for path, *_ in API_GETS])
def test_no_endpoint_answers_a_bare_array(path, view, body):
    assert body.get("type") != "array", (
        f"GET {path} ({view.__name__}) answers a bare list: set pagination_class and "
        "return core.api_lists.paginated_response(...)."
    )


@pytest.mark.parametrize(("path", "view"), LIST_ROUTES, ids=[path for path, _ in LIST_ROUTES])
def test_every_list_pages_through_the_helper(path, view):
    """Same paginator (so the same page size and parameters) and the same code path."""
    assert view.pagination_class is api_settings.DEFAULT_PAGINATION_CLASS, view.__name__
    get = view.get
    assert "paginated_response" in get.__code__.co_names, (
        f"{view.__name__}.get pages by hand; return core.api_lists.paginated_response(...)."
    )
    assert get.__globals__["paginated_response"] is api_lists.paginated_response


@pytest.mark.parametrize("path", [path for path, _ in LIST_ROUTES])
def test_every_list_answers_a_page_and_refuses_a_page_past_the_end(api_client, campaign, path):
    url = path.format(campaign_id=campaign.id)
    listed = api_client.get(url)
    assert listed.status_code == 200
    assert set(listed.json()) == PAGE_KEYS
    past_the_end = api_client.get(url, {"page": "2"})
    assert past_the_end.status_code == 404 and past_the_end.json()["message"] == "Invalid page."
    for page in ("nonsense", "1_0", "\u0661"):
        refused = api_client.get(url, {"page": page})
        assert refused.status_code == 404
        assert refused.json()["message"] == (
            f"Invalid page {page!r}: a page is a number in plain digits, from 1."
        )


LISTS = [
    ("api-gold-list", "kind", ["training", "gold"]),
    ("api-evaluation-list", "kind", ["table2", "table3"]),
    ("api-decision-list", "state", ["proposed", "confirmed"]),
    ("api-decision-list", "action", ["approve", "block"]),
    ("api-quality-workers", "verdict", ["filtered", "on_hold"]),
]


@pytest.mark.parametrize(("name", "param", "known"), LISTS)
def test_an_unknown_filter_value_is_a_400_that_names_the_choices(
    api_client, campaign, name, param, known
):
    url = reverse(name, kwargs={"campaign_id": campaign.id})
    refused = api_client.get(url, {param: "nonsense"})
    assert refused.status_code == 400
    body = refused.json()
    assert body["message"] == f"Unknown {param} 'nonsense'."
    assert all(value in body["fields"][param][0] for value in known)
    for value in ("", known[0]):
        listed = api_client.get(url, {param: value} if value else {})
        assert listed.status_code == 200
        assert listed.json()["results"] == [] and listed.json()["count"] == 0
