"""Invitation links: a worker opens the campaign's link, starts (or resumes) an assignment.

The worker id comes from the link (`?worker=...`, for researchers who hand out
personal links) or is a random id kept in a signed cookie, so the same browser
resumes its assignment and never gets a unit it has already seen.
"""

import secrets

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from cfannotate.campaigns.models import Campaign
from cfannotate.core.exceptions import CfannotateError, NotFound
from cfannotate.crowd.models import Platform
from cfannotate.crowd.services import worker_get_or_create
from cfannotate.crowd.tokens import assignment_token, join_token_read
from cfannotate.labeling.assignments import assignment_start

COOKIE_PREFIX = "cfannotate_worker_"
COOKIE_SALT = "cfannotate.crowd.link-worker"
COOKIE_MAX_AGE = 60 * 60 * 24 * 90


def _campaign(token: str) -> Campaign:
    campaign = Campaign.objects.filter(id=join_token_read(token)).first()
    if campaign is None:
        raise NotFound("This task no longer exists.")
    return campaign


@never_cache
@require_http_methods(["GET", "POST"])
def join(request: HttpRequest, token: str) -> HttpResponse:
    try:
        campaign = _campaign(token)
        if request.method == "GET":
            return TemplateResponse(request, "crowd/join.html", {"campaign": campaign})
        cookie = COOKIE_PREFIX + str(campaign.id)
        worker_id = request.GET.get("worker") or request.get_signed_cookie(
            cookie, default=None, salt=COOKIE_SALT
        )
        worker_id = worker_id or "link-" + secrets.token_urlsafe(12)
        worker = worker_get_or_create(platform=Platform.LINK, external_id=worker_id)
        assignment = assignment_start(campaign=campaign, worker=worker)
    except CfannotateError as error:
        return TemplateResponse(
            request, "labeling/error.html", {"error": error}, status=error.status_code
        )
    response = redirect(
        "worker-start",
        token=assignment_token(assignment_id=assignment.id, nonce=assignment.token_nonce),
    )
    response.set_signed_cookie(
        cookie,
        worker.external_id,
        salt=COOKIE_SALT,
        max_age=COOKIE_MAX_AGE,
        httponly=True,
        samesite="Lax",
        secure=request.is_secure(),
    )
    return response
