"""Everything a researcher can do on a page, the API can do too (issue 24, item 11).

The test walks the site's URL resolver for every route outside `api/` and `admin/`
whose view accepts POST (read from its `require_POST` / `require_http_methods`
decorator; a view without one accepts every method and counts) and fails on one that is
neither mapped to an API operation below nor exempted with a reason. A new page action
therefore needs its API operation, calling the same service, in the same change.
"""

from django.urls import URLPattern, URLResolver, get_resolver, reverse

# Page route -> (HTTP method, API route) that does the same thing through the same service.
API_COUNTERPARTS = {
    "campaign-new": ("POST", "api-campaign-create"),
    "campaign-settings": ("PATCH", "api-campaign-update"),
    # The page's upload steps (preview, change the mapping, import) are one API request:
    # `dry_run=true` previews, a `mapping` chooses the columns, without dry_run it imports.
    "original-upload": ("POST", "api-original-upload"),
    "original-upload-preview": ("POST", "api-original-upload"),
    "original-upload-import": ("POST", "api-original-upload"),
    "run-start": ("POST", "api-generation-start"),
    "run-cancel": ("POST", "api-generation-cancel"),
    "run-retry": ("POST", "api-generation-retry"),
    "candidate-import": ("POST", "api-candidate-import"),
    "candidate-import-cancel": ("POST", "api-candidate-import-cancel"),
    "candidates-bulk": ("POST", "api-candidate-review"),
    "candidate-predictions": ("POST", "api-candidate-predictions"),
    "candidate-accept": ("POST", "api-candidate-accept"),
    "candidate-reject": ("POST", "api-candidate-reject"),
    "candidate-edit": ("PATCH", "api-candidate-detail"),
    "labeling-open": ("POST", "api-labeling-open"),
    "labeling-pause": ("POST", "api-labeling-pause"),
    "labeling-order": ("POST", "api-labeling-order"),
    "labeling-priority": ("POST", "api-original-priority"),
    # A round on one original (from the gold page's list or the review page's "Promote to
    # gold"): ticked candidates, items given by `candidate_id`, or typed texts.
    "gold-original": ("POST", "api-gold-list"),
    "gold-import": ("POST", "api-gold-import"),
    "gold-round-active": ("PATCH", "api-gold-detail"),
    "gold-round-answers": ("PATCH", "api-gold-detail"),
    "crowd-mturk-publish": ("POST", "api-mturk-publish"),
    "crowd-prolific-study": ("POST", "api-prolific-study"),
    "crowd-link-create": ("POST", "api-link-list"),
    "crowd-link-close": ("POST", "api-link-close"),
    "crowd-personal-link-create": ("POST", "api-personal-link-list"),
    "crowd-personal-link-revoke": ("POST", "api-personal-link-revoke"),
    "crowd-sync": ("POST", "api-platform-sync"),
    "crowd-places-add": ("POST", "api-publication-places"),
    "crowd-places-cap": ("POST", "api-publication-places-cap"),
    "crowd-approve": ("POST", "api-assignment-approve"),
    "crowd-reject": ("POST", "api-assignment-reject"),
    "crowd-bonus": ("POST", "api-worker-bonus"),
    "crowd-block": ("POST", "api-worker-block"),
    "quality-refresh": ("POST", "api-quality-refresh"),
    "quality-decision-update": ("POST", "api-decision-update"),
    "quality-decisions-confirm": ("POST", "api-decisions-confirm"),
    "quality-decisions-apply": ("POST", "api-decisions-apply"),
    "evaluation-run": ("POST", "api-evaluation-run"),
}

# POST routes that are not a researcher's action on a campaign, each with why.
EXEMPT = {
    "home": "the landing page reads only (no method guard)",
    "campaign-list": "a redirect to the landing page's campaign list",
    "health": "the load balancer's probe (no method guard)",
    "login": "signing in; the API authenticates with a token instead",
    "logout": "signing out of the site's session",
    "api-token": "where a researcher gets the API token itself",
    "original-upload-cancel": "forgets the file the page keeps between its preview and import "
    "steps; an API upload is a single request and keeps nothing",
    "join": "worker entry",
    "join-link": "worker entry",
    "join-personal": "worker entry",
    "worker-item-save": "worker round page",
    "worker-round-submit": "worker round page",
    "worker-lease-keep": "worker pages (the warning before the lease runs out)",
}
SKIPPED_PREFIXES = ("api/", "admin/")


def _routes(patterns=None, prefix=""):
    """(route, URLPattern) of every URL the site serves."""
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern), pattern


def _allowed_methods(view, seen=None) -> set[str] | None:
    """The methods a view's decorators let through; None when no decorator limits them.

    `require_http_methods` keeps its list in the closure of the function it returns;
    other decorators (login_required, our own) wrap that function, so the search follows
    `__wrapped__` and every function held in a closure. Class-based views (DRF, auth)
    answer the methods they define.
    """
    seen = set() if seen is None else seen
    if id(view) in seen:
        return None
    seen.add(id(view))
    view_class = getattr(view, "view_class", None) or getattr(view, "cls", None)
    if view_class is not None:
        return {name.upper() for name in view_class.http_method_names if hasattr(view_class, name)}
    closure = getattr(view, "__closure__", None) or ()
    names = getattr(getattr(view, "__code__", None), "co_freevars", ())
    for name, cell in zip(names, closure, strict=False):
        if name in ("request_method_list", "allowed"):  # Django's decorator, crowd's _methods
            return {method.upper() for method in cell.cell_contents}
    inner = [getattr(view, "__wrapped__", None)] + [cell.cell_contents for cell in closure]
    for candidate in inner:
        if callable(candidate) and hasattr(candidate, "__code__"):
            found = _allowed_methods(candidate, seen)
            if found is not None:
                return found
    return None


def _page_post_routes() -> dict[str, str]:
    """Route name -> route of every page (not API, not admin) that accepts POST."""
    routes = {}
    for route, pattern in _routes():
        if route.startswith(SKIPPED_PREFIXES):
            continue
        methods = _allowed_methods(pattern.callback)
        if methods is None or "POST" in methods:
            assert pattern.name, f"the POST route {route} has no name to map it by"
            routes[pattern.name] = route
    return routes


def test_every_page_post_route_has_an_api_operation_or_a_reason():
    unmapped = sorted(
        f"{name} ({route})"
        for name, route in _page_post_routes().items()
        if name not in API_COUNTERPARTS and name not in EXEMPT
    )
    assert not unmapped, (
        "Page actions without an API operation (add one calling the same service, then map "
        f"it in API_COUNTERPARTS): {', '.join(unmapped)}"
    )


def test_the_table_names_only_routes_that_exist_and_accept_post():
    posting = _page_post_routes()
    stale = sorted((set(API_COUNTERPARTS) | set(EXEMPT)) - set(posting))
    assert not stale, f"mapped or exempted, but no longer a POST page route: {stale}"
    assert not set(API_COUNTERPARTS) & set(EXEMPT)


def test_every_counterpart_is_an_api_operation_with_that_method():
    by_name = {pattern.name: (route, pattern) for route, pattern in _routes()}
    for page, (method, api_name) in API_COUNTERPARTS.items():
        assert api_name in by_name, f"{page}: no route named {api_name}"
        route, pattern = by_name[api_name]
        assert route.startswith("api/"), f"{page}: {api_name} is not under api/"
        assert method in _allowed_methods(pattern.callback), f"{page}: {api_name} has no {method}"


def test_the_walk_sees_a_route_without_a_counterpart():
    """The guard itself: a POST page added to the URLs is found and reported."""
    from django.urls import clear_url_caches, path
    from django.views.decorators.http import require_POST

    import cfannotate.urls

    @require_POST
    def new_action(request, campaign_id):  # pragma: no cover - never called
        raise AssertionError

    original = list(cfannotate.urls.urlpatterns)
    cfannotate.urls.urlpatterns.append(
        path("campaigns/<int:campaign_id>/new-action/", new_action, name="new-action")
    )
    clear_url_caches()
    try:
        assert "new-action" in _page_post_routes()
        assert reverse("new-action", args=[1]) == "/campaigns/1/new-action/"
    finally:
        cfannotate.urls.urlpatterns[:] = original
        clear_url_caches()


def test_the_schema_documents_every_counterpart(client, db):
    schema = client.get("/api/schema/?format=json").json()
    operations = {
        (method.upper(), path) for path, methods in schema["paths"].items() for method in methods
    }
    by_name = {pattern.name: route for route, pattern in _routes()}
    for page, (method, api_name) in API_COUNTERPARTS.items():
        path = "/" + by_name[api_name].replace("<int:", "{").replace("<str:", "{")
        path = path.replace(">", "}")
        assert (method, path) in operations, f"{page}: {method} {path} is not in the schema"
