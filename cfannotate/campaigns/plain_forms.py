"""Researcher controls that work before htmx has loaded, and without JavaScript.

Every htmx control on a campaign page is also a plain form: `method="post"` and an
`action` that is its `hx-post` URL. htmx scripts are deferred, so a click that lands before
they run (a slow connection, a quick researcher) or in a browser without JavaScript posts
that form. The view is the same one htmx calls, and it answers with the block it would
swap in. `@plain_form_fallback` turns that answer into what a plain browser needs:

- done (a 2xx answer): a redirect (303, Post/Redirect/Get) back to the page the form was
  on, or to the route's campaign section, with the block's `message` and `warnings` as
  flash messages, so a reload does not post again;
- refused (4xx or 5xx): the section's page with the block inside it, its error next to the
  form and what was typed still in the fields, with the same status;
- not yet done because it asks first (the block's context has `asks_to_confirm`: what
  htmx asks in a dialog, like sending decisions to the platforms): the section's page
  with the block and its question.

A plain GET of a block that a page loads with htmx (the model evaluation) is that block in
its section's page. htmx requests pass through unchanged. Views that already answer plain
requests themselves (the settings form, the crowd platforms block) do not need it.

`@block_of_section_page` is for the blocks that are parts of a section's page (the
generation progress, the upload form, the quality report): a plain GET of one (its URL
opened in a tab, typed or bookmarked) is sent to that page, which shows the block in place,
instead of the bare block without the site's layout.
"""

from collections.abc import Callable
from functools import wraps
from urllib.parse import urlsplit

from django.contrib import messages
from django.http import HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import Resolver404, resolve, reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import mark_safe

from cfannotate.campaigns.sections import SECTION_BY_KEY, SECTIONS, Section, section_of_route
from cfannotate.core.htmx import HtmxHttpRequest

PAGE = "campaigns/plain_form_result.html"
# The pages a done plain post may go back to: the sections, and the model evaluation, which
# the exports section loads after itself with htmx and is a page of its own without it.
BACK_PAGES = {section.url_name for section in SECTIONS} | {"evaluation-fragment"}


class HttpResponseSeeOther(HttpResponseRedirect):
    status_code = 303


def plain_form_fallback(view: Callable) -> Callable:
    """For views under `@campaign_owner_required` that answer htmx with a block."""

    @wraps(view)
    def wrapped(request: HtmxHttpRequest, *args, **kwargs) -> HttpResponse:
        response = view(request, *args, **kwargs)
        if request.htmx or not isinstance(response, TemplateResponse):
            return response
        section = _section(request)
        context = response.context_data or {}
        if (
            request.method == "POST"
            and response.status_code < 400
            and not context.get("asks_to_confirm")
        ):
            _flash(request, context)
            return HttpResponseSeeOther(_back_url(request, section))
        return _page(request, response, section)

    return wrapped


def block_of_section_page(view: Callable) -> Callable:
    """For block views under `@campaign_owner_required`: a plain GET goes to the section page,
    with its query (a block's filters and page are the page's too)."""

    @wraps(view)
    def wrapped(request: HtmxHttpRequest, *args, **kwargs) -> HttpResponse:
        if request.method == "GET" and not request.htmx:
            url = _section_url(request, _section(request))
            query = request.GET.urlencode()
            return HttpResponseRedirect(f"{url}?{query}" if query else url)
        return view(request, *args, **kwargs)

    return wrapped


def _section(request) -> Section:
    match = request.resolver_match
    key = section_of_route(match.url_name if match else None)
    return SECTION_BY_KEY[key or "overview"]


def _section_url(request, section: Section) -> str:
    return reverse(section.url_name, kwargs={"campaign_id": request.campaign.id})


def _back_url(request, section: Section) -> str:
    """The page the form was on: the Referer, if it is one of this campaign's BACK_PAGES on
    this site (its query kept: the review page's filters), else the route's section."""
    referer = request.headers.get("Referer", "")
    own_site = url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    if referer and own_site:
        try:
            match = resolve(urlsplit(referer).path)
        except Resolver404:
            match = None
        if (
            match is not None
            and match.url_name in BACK_PAGES
            and match.kwargs.get("campaign_id") == request.campaign.id
        ):
            return referer
    return _section_url(request, section)


def _flash(request, context: dict) -> None:
    message = context.get("message")
    if message:
        messages.success(request, str(message))
    for warning in context.get("warnings") or ():
        messages.warning(request, str(warning))


def _page(request, response: TemplateResponse, section: Section) -> HttpResponse:
    """The block inside its section's page; a table row gets a table to sit in."""
    block = response.rendered_content  # rendered from our autoescaped templates
    context = {
        "campaign": request.campaign,
        "section": section,
        "section_url": _section_url(request, section),
        "fragment": mark_safe(block),  # noqa: S308 - escaped when the block was rendered
        "table_row": block.lstrip().startswith("<tr"),
    }
    return TemplateResponse(request, PAGE, context, status=response.status_code)
