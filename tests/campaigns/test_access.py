"""Every route under a campaign answers only its owner: one guard for pages and the API.

The routes are read from the URL resolver, so a new page or API view is checked the day
it is added: someone else's campaign is a 404 (never a 403, never its content), and a
visitor who is not signed in is sent to the login page (pages) or answered 401 (API).
"""

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from cfannotate.campaigns.access import campaign_owner_required
from tests.factories import make_campaign

# Values for the other parts of a route; none needs to exist (the guard answers first).
ARGUMENTS = {"int": "1", "str": "contrast", "slug": "x", "path": "x"}


def _routes(patterns, prefix=""):
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern):
            yield route, pattern


def campaign_routes() -> list[str]:
    """Every route with a `<int:campaign_id>`, its other parts filled in."""
    found = []
    for route, _ in _routes(get_resolver().url_patterns):
        if "<int:campaign_id>" not in route:
            continue
        path = route.replace("<int:campaign_id>", "{campaign}")
        for converter, value in ARGUMENTS.items():
            while f"<{converter}:" in path:
                start = path.index(f"<{converter}:")
                path = path[:start] + value + path[path.index(">", start) + 1 :]
        found.append("/" + path)
    return found


ROUTES = campaign_routes()


def test_the_walk_finds_pages_and_api_routes():
    assert any(route.startswith("/api/") for route in ROUTES)
    assert any(route.startswith("/campaigns/") for route in ROUTES)
    assert "/campaigns/{campaign}/settings/" in ROUTES


@pytest.mark.parametrize("route", ROUTES)
def test_only_the_owner_gets_past_the_guard(client, researcher, other_researcher, route):
    theirs = make_campaign(owner=other_researcher)
    url = route.format(campaign=theirs.id)
    # Not signed in: the login page (pages) or 401 (API).
    response = client.get(url)
    if route.startswith("/api/"):
        assert response.status_code in (401, 405), (url, response.status_code)
    else:
        assert response.status_code in (302, 405), (url, response.status_code)
        if response.status_code == 302:
            assert response["Location"].startswith("/accounts/login/")
    # Signed in as someone else: 404 for every method, nothing of the campaign shown.
    client.force_login(researcher)
    for method in (client.get, client.post):
        response = method(url)
        assert response.status_code in (404, 405), (url, method.__name__, response.status_code)
        assert theirs.name not in response.content.decode()


def test_the_page_guard_hands_the_view_the_campaign(rf, researcher, other_researcher):
    mine, theirs = make_campaign(owner=researcher), make_campaign(owner=other_researcher)
    seen = []

    @campaign_owner_required
    def view(request, campaign_id):
        seen.append(request.campaign)
        return "ok"

    request = rf.get("/")
    request.user = researcher
    assert view(request, campaign_id=mine.id) == "ok" and seen == [mine]
    from django.http import Http404

    with pytest.raises(Http404):
        view(request, campaign_id=theirs.id)
