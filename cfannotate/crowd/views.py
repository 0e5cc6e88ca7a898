"""Where workers come in: invitation links, personal links, and the entry URLs that MTurk and
Prolific open.

A worker who opens a campaign's link or a named link is anonymous: a random id kept in a
signed, per-campaign cookie, so the same browser resumes its assignment and never gets a
unit it has already seen. A name in the URL (`?worker=NAME`) is never taken as an
identity: it is ignored, and the page says so. A named worker comes in through their
personal link, whose signed token names them (`services.personal_link_read`); on another
device, an anonymous worker types the resume code their pages show (`_resume`). Platform
entries take the platform's URL parameters instead and never set a cookie: MTurk shows
them in an iframe, where browsers block third-party cookies.
"""

import secrets
from collections.abc import Callable
from functools import wraps

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views.decorators.cache import never_cache

from cfannotate.campaigns.models import Campaign
from cfannotate.campaigns.task_templates import template_for
from cfannotate.core.exceptions import (
    CfannotateError,
    Conflict,
    Forbidden,
    MethodNotAllowed,
    NotFound,
)
from cfannotate.core.throttles import RESUME_FAILURES, client_address, retry_message
from cfannotate.core.worker_tokens import (
    entry_token_read,
    join_token_read,
    link_token_read,
    worker_token,
)
from cfannotate.crowd.models import InvitationLink, Platform, Publication
from cfannotate.crowd.providers import Preview, allow_platform_framing, provider_for
from cfannotate.crowd.selectors import holds_assignment, preview_example, session_facts
from cfannotate.crowd.services import (
    ANONYMOUS_ID,
    ANONYMOUS_PREFIX,
    assignment_resume,
    personal_link_read,
)

COOKIE_PREFIX = "cfannotate_worker_"
COOKIE_SALT = "cfannotate.crowd.link-worker"
COOKIE_MAX_AGE = 60 * 60 * 24 * 90


def _error_page(request: HttpRequest, error: CfannotateError) -> HttpResponse:
    return TemplateResponse(
        request, "labeling/error.html", {"error": error}, status=error.status_code
    )


def _methods(*allowed: str) -> Callable:
    """Like `require_http_methods`, but a refused method gets the error page, not an empty 405."""

    def decorator(view: Callable) -> Callable:
        @wraps(view)
        def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if request.method not in allowed:
                error = MethodNotAllowed("This link opens in a browser; it takes no other request.")
                response = _error_page(request, error)
                response["Allow"] = ", ".join(allowed)
                return response
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


# --- Invitation links ------------------------------------------------------------------------


def _campaign(token: str) -> Campaign:
    campaign = Campaign.objects.filter(id=join_token_read(token)).first()
    if campaign is None:
        raise NotFound("This task no longer exists.")
    return campaign


def _link(token: str) -> InvitationLink:
    link = InvitationLink.objects.select_related("campaign").filter(id=link_token_read(token))
    link = link.first()
    if link is None:
        raise NotFound("This invitation link no longer exists.")
    if not link.is_active:
        raise Forbidden("This invitation link was closed by the researcher.")
    return link


def _anonymous_worker_id(request: HttpRequest, cookie: str) -> str | None:
    """The anonymous worker this browser was given for the campaign, if any.

    Only ids this site makes count: a cookie holding a name (set by entries through
    `?worker=NAME` before names stopped being trusted) starts a new anonymous worker.
    """
    worker_id = request.get_signed_cookie(cookie, default=None, salt=COOKIE_SALT)
    return worker_id if worker_id and ANONYMOUS_ID.match(worker_id) else None


def _remember(request: HttpRequest, response: HttpResponse, campaign: Campaign, worker_id: str):
    response.set_signed_cookie(
        COOKIE_PREFIX + str(campaign.id),
        worker_id,
        salt=COOKIE_SALT,
        max_age=COOKIE_MAX_AGE,
        httponly=True,
        samesite="Lax",
        secure=request.is_secure(),
    )
    return response


def _join_page(request: HttpRequest, campaign: Campaign, status: int = 200, **extra):
    context = {
        "campaign": campaign,
        "facts": session_facts(campaign),
        "name_ignored": "worker" in request.GET,
        **extra,
    }
    return TemplateResponse(request, "crowd/join.html", context, status=status)


def _resume(request: HttpRequest, campaign: Campaign, used_up: bool) -> HttpResponse:
    """A resume code typed on the campaign's page: back to that worker's round, or the
    page again with the reason and the code kept. Wrong codes are counted per address."""
    code = request.POST.get("code", "")[:100]
    address = client_address(request)
    wait = RESUME_FAILURES.wait_seconds(address)
    if wait:
        reason = retry_message("Too many wrong codes from your connection", wait)
        return _join_page(request, campaign, 429, resume_error=reason, code=code, used_up=used_up)
    try:
        assignment = assignment_resume(campaign=campaign, code=code)
    except CfannotateError as error:
        RESUME_FAILURES.record_failure(address)
        return _join_page(
            request, campaign, 400, resume_error=error.message, code=code, used_up=used_up
        )
    response = redirect("worker-start", token=worker_token(assignment))
    # This browser now comes back to the same worker through the link, as the first did.
    return _remember(request, response, campaign, assignment.worker.external_id)


def _join(request: HttpRequest, campaign: Campaign, link: InvitationLink | None) -> HttpResponse:
    worker_id = _anonymous_worker_id(request, COOKIE_PREFIX + str(campaign.id))
    used_up = link is not None and link.remaining == 0 and not worker_id
    if request.method == "POST" and "code" in request.POST:
        return _resume(request, campaign, used_up)
    if used_up:
        # Say it before anyone clicks Start; a returning worker may still resume.
        message = f"This invitation link is used up: it was for {link.quota} assignments."
        if request.method == "GET":
            return _join_page(request, campaign, Conflict.status_code, used_up=message)
        raise Conflict(message)
    if request.method == "GET":
        # A worker this browser already started may have rounds of their own to resume,
        # even when the task has nothing left for anyone new.
        holds = holds_assignment(campaign, platform=Platform.LINK, external_id=worker_id)
        return _join_page(request, campaign, returning=bool(worker_id), holds_assignment=holds)
    worker_id = worker_id or ANONYMOUS_PREFIX + secrets.token_urlsafe(12)
    outcome = provider_for(Platform.LINK).entry(
        source=link or campaign, params={"worker": worker_id}
    )
    assignment = outcome.assignment
    response = redirect("worker-start", token=worker_token(assignment))
    return _remember(request, response, campaign, assignment.worker.external_id)


@never_cache
@_methods("GET", "POST")
def join(request: HttpRequest, token: str) -> HttpResponse:
    """The campaign's general invitation link (no quota)."""
    try:
        return _join(request, _campaign(token), None)
    except CfannotateError as error:
        return _error_page(request, error)


@never_cache
@_methods("GET", "POST")
def join_link(request: HttpRequest, token: str) -> HttpResponse:
    """A named invitation link, maybe with a quota."""
    try:
        link = _link(token)
        return _join(request, link.campaign, link)
    except CfannotateError as error:
        return _error_page(request, error)


@never_cache
@_methods("GET", "POST")
def join_personal(request: HttpRequest, token: str) -> HttpResponse:
    """A worker's personal link: it starts or resumes that worker's assignment, nobody else's.

    It sets no cookie: the link itself is how its worker comes back, and revoking it
    must leave nothing behind that still works.
    """
    try:
        link = personal_link_read(token)
        if request.method == "GET":
            context = {
                "campaign": link.campaign,
                "personal": link,
                "facts": session_facts(link.campaign),
                "returning": True,  # the named worker may have rounds of their own
                "holds_assignment": holds_assignment(
                    link.campaign,
                    platform=link.worker.platform,
                    external_id=link.worker.external_id,
                ),
            }
            return TemplateResponse(request, "crowd/join.html", context)
        outcome = provider_for(Platform.LINK).entry(source=link, params={})
        return redirect("worker-start", token=worker_token(outcome.assignment))
    except CfannotateError as error:
        return _error_page(request, error)


# --- Platform entries ------------------------------------------------------------------------


def _publication(token: str, platform: str) -> Publication:
    publication = (
        Publication.objects.select_related("campaign")
        .filter(id=entry_token_read(token), platform=platform)
        .first()
    )
    if publication is None:
        raise NotFound("This task no longer exists.")
    return publication


def _preview(request: HttpRequest, publication: Publication) -> HttpResponse:
    campaign = publication.campaign
    template = template_for(campaign.task_type)
    context = {
        "campaign": campaign,
        "platform": publication.platform,
        "instructions": campaign.instructions or (template.instructions if template else ""),
        "example": preview_example(campaign),
        "facts": session_facts(campaign, publication),
    }
    return TemplateResponse(request, "crowd/preview.html", context)


@never_cache
@_methods("GET")
def platform_entry(request: HttpRequest, platform: str, token: str) -> HttpResponse:
    """The URL a platform opens (MTurk's ExternalURL, Prolific's study URL).

    A preview claims nothing; an entry binds the platform's ids to an assignment and
    sends the worker to its pages, whose token carries those ids.
    """
    try:
        publication = _publication(token, platform)
        outcome = provider_for(platform).entry(source=publication, params=request.GET)
        if isinstance(outcome, Preview):
            response = _preview(request, publication)
        else:
            response = redirect("worker-start", token=worker_token(outcome.assignment))
    except CfannotateError as error:
        response = _error_page(request, error)
    return allow_platform_framing(response, platform=platform)
