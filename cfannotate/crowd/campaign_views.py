"""The crowd block of the campaign page: publish on MTurk or Prolific, invitation links,
personal links, status sync, and review buttons (approve, reject, bonus, block). htmx
fragments; every view checks that the campaign is the researcher's own and calls one
service. A researcher's block keeps the worker out of their own campaigns (or this one)
only; blocking everywhere is an administrator's action."""

import secrets
from collections.abc import Callable
from functools import wraps
from urllib.parse import urlsplit

from django.contrib import messages
from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from cfannotate.campaigns.access import campaign_owner_required
from cfannotate.campaigns.plain_forms import HttpResponseSeeOther
from cfannotate.core.exceptions import CfannotateError, InvalidInput, NotFound
from cfannotate.core.htmx import HtmxHttpRequest
from cfannotate.core.worker_tokens import link_token, personal_link_token
from cfannotate.crowd import review
from cfannotate.crowd.blocks import blocks_in
from cfannotate.crowd.forms import (
    ApproveForm,
    BlockForm,
    BonusForm,
    InvitationLinkForm,
    MTurkPublishForm,
    PersonalLinkForm,
    PlacesCapForm,
    PlacesForm,
    ProlificStudyForm,
    RejectForm,
    form_error_message,
)
from cfannotate.crowd.models import BlockScope, InvitationLink, PersonalLink
from cfannotate.crowd.places import (
    places_added_message,
    places_cap_message,
    publication_places_add,
    publication_places_cap_set,
)
from cfannotate.crowd.providers import public_base_url
from cfannotate.crowd.publishing import (
    entry_url,
    mturk_publish,
    platform_sync,
    prolific_study_create,
)
from cfannotate.crowd.selectors import (
    assignment_of,
    assignments_needed,
    links_of,
    personal_links_of,
    places_short,
    publication_of,
    publications_of,
    recent_actions,
    review_queue,
    study_places,
    worker_of,
)
from cfannotate.crowd.services import (
    invitation_link_close,
    invitation_link_create,
    personal_link_create,
    personal_link_revoke,
)

FRAGMENT = "crowd/_campaign_platforms.html"
PAGE = "crowd/platforms.html"
# What the review queue says of a blocked worker, seen from this campaign.
BLOCK_BADGES = {
    BlockScope.EVERYWHERE: "blocked everywhere (administrator)",
    BlockScope.RESEARCHER: "blocked from your campaigns",
    BlockScope.CAMPAIGN: "blocked from this campaign",
}


def platforms_context(request, campaign, **extra) -> dict:
    base_url = public_base_url(request)
    studies = study_places(campaign)
    places = {study.publication.pk: study for study in studies}
    refused = extra.get("refused")
    publications = [
        (
            publication,
            entry_url(publication=publication, base_url=base_url),
            places.get(publication.pk),
            _typed(refused, "crowd-places-add", publication.pk),
            _typed(refused, "crowd-places-cap", publication.pk),
        )
        for publication in publications_of(campaign)
    ]
    links = [
        (link, base_url + reverse("join-link", kwargs={"token": link_token(link.id)}))
        for link in links_of(campaign)
    ]
    personal_links = [
        (link, base_url + reverse("join-personal", kwargs={"token": _personal_token(link)}))
        for link in personal_links_of(campaign)
    ]
    assignments = review_queue(campaign)
    blocked = blocks_in(campaign, {assignment.worker_id for assignment in assignments})
    # Each bonus form carries its own token, so a double click pays once.
    queue = [
        (
            assignment,
            secrets.token_hex(16),
            BLOCK_BADGES.get(blocked.get(assignment.worker_id)),
            _typed(refused, "crowd-reject", assignment.id),
            _typed(refused, "crowd-bonus", assignment.id),
            _typed(refused, "crowd-block", assignment.worker_id),
            review.review_actions(assignment),
        )
        for assignment in assignments
    ]
    needed = assignments_needed(campaign)
    return {
        "campaign": campaign,
        "publications": publications,
        "places_short": places_short(campaign, studies),
        # The sweep adds places to the newest study only: its cap is the one to set.
        "newest_study": studies[-1].publication.pk if studies else None,
        "links": links,
        "personal_links": personal_links,
        "now": timezone.now(),
        "queue": queue,
        "actions": recent_actions(campaign),
        "mturk_form": MTurkPublishForm(
            initial={
                "title": f"Judge edited {campaign.text_name.lower()}s",
                "assignments": needed,
            },
            auto_id="mturk_%s",
        ),
        "prolific_form": ProlificStudyForm(
            initial={"name": campaign.name, "places": needed},
            auto_id="prolific_%s",
        ),
        "link_form": InvitationLinkForm(auto_id="link_%s"),
        "personal_link_form": PersonalLinkForm(auto_id="personal_%s"),
        "https": base_url.startswith("https://"),
        **extra,
    }


def _typed(refused: dict | None, action: str, row: int):
    """What the researcher typed in one row's form, when that form was just refused."""
    if refused and refused["action"] == action and refused["row"] == row:
        return refused["values"]
    return None


def _personal_token(link: PersonalLink) -> str:
    return personal_link_token(
        link_id=link.id, worker=link.worker.external_id, expires_at=link.expires_at
    )


def _render(request, campaign, *, status: int = 200, **extra) -> HttpResponse:
    template = FRAGMENT if getattr(request, "htmx", False) else PAGE
    return TemplateResponse(
        request, template, platforms_context(request, campaign, **extra), status=status
    )


def campaign_action(view: Callable) -> Callable:
    """A POST on the researcher's own campaign: the view returns a message or raises.

    A refusal (a bad field, or the platform's no) comes back with what the researcher
    typed: the form they sent bound again, open, with its errors (`_valid`), or, for a
    row's small form, its values under `refused` (the action, the row's id, the values).
    """

    @wraps(view)
    @campaign_owner_required
    @require_POST
    def wrapped(request: HtmxHttpRequest, campaign_id: int, **kwargs) -> HttpResponse:
        campaign = request.campaign
        try:
            message, problems = view(request, campaign, **kwargs)
        except CfannotateError as error:
            # A platform's refusal stays inside the page, in words, with what to fix.
            kept = getattr(request, "kept_form", None)
            return _render(
                request,
                campaign,
                error=error.message,
                fix=getattr(error, "fix", ""),
                status=error.status_code,
                refused={
                    "action": request.resolver_match.url_name,
                    "row": next(iter(kwargs.values()), None),
                    "values": request.POST,
                },
                **({kept[0]: kept[1], "open_form": kept[0]} if kept else {}),
            )
        if not request.htmx:
            return _done_plain(request, campaign, message, problems)
        return _render(request, campaign, message=message, problems=problems)

    return wrapped


def _done_plain(request, campaign, message: str, problems) -> HttpResponse:
    """A plain (no-JS) post that worked: its message flashed, then back to the page it came
    from (Post/Redirect/Get), so reloading that page does not post it again."""
    messages.success(request, message)
    for problem in problems:
        messages.warning(request, str(problem))
    return HttpResponseSeeOther(_back_url(request, campaign))


def _back_url(request, campaign) -> str:
    """The crowd platforms page when the form was posted from it (what a browser without
    JavaScript shows), else the campaign's labeling and platforms section."""
    platforms = reverse("crowd-platforms", kwargs={"campaign_id": campaign.id})
    referer = request.headers.get("Referer", "")
    own_site = url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    if referer and own_site and urlsplit(referer).path == platforms:
        return platforms
    return reverse("campaign-labeling", kwargs={"campaign_id": campaign.id})


def _valid(form, *, request=None, keep_as: str = ""):
    """The form, validated; InvalidInput in words otherwise. With `keep_as`, a refusal
    shows this bound form in the page under that context name (`campaign_action`)."""
    if keep_as:
        request.kept_form = (keep_as, form)
    if not form.is_valid():
        raise InvalidInput(
            form_error_message(form), fields={k: list(v) for k, v in form.errors.items()}
        )
    return form


@campaign_owner_required
@require_GET
def platforms_block(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    return _render(request, request.campaign)


@campaign_action
def mturk_publish_view(request, campaign):
    form = _valid(
        MTurkPublishForm(request.POST, auto_id="mturk_%s"), request=request, keep_as="mturk_form"
    )
    publication = mturk_publish(
        campaign=campaign,
        options=form.options(),
        base_url=public_base_url(request),
        actor=request.user,
    )
    where = "the MTurk sandbox" if publication.sandbox else "MTurk"
    return f"Published {publication.hits.count()} HITs on {where}.", []


@campaign_action
def prolific_study_view(request, campaign):
    form = _valid(
        ProlificStudyForm(request.POST, auto_id="prolific_%s"),
        request=request,
        keep_as="prolific_form",
    )
    publication = prolific_study_create(
        campaign=campaign,
        options=form.options(),
        base_url=public_base_url(request),
        actor=request.user,
    )
    return (
        f"Created draft study {publication.external_id} on Prolific: review and publish it there.",
        [],
    )


@campaign_action
def places_add_view(request, campaign, publication_id: int):
    form = _valid(PlacesForm(request.POST))
    publication = publication_places_add(
        publication=publication_of(campaign, publication_id),
        places=form.cleaned_data["places"],
    )
    return places_added_message(publication), []


@campaign_action
def places_cap_view(request, campaign, publication_id: int):
    form = _valid(PlacesCapForm(request.POST))
    publication = publication_places_cap_set(
        publication=publication_of(campaign, publication_id), up_to=form.cleaned_data["up_to"]
    )
    return places_cap_message(publication), []


@campaign_action
def link_create_view(request, campaign):
    form = _valid(
        InvitationLinkForm(request.POST, auto_id="link_%s"), request=request, keep_as="link_form"
    )
    link = invitation_link_create(
        campaign=campaign, name=form.cleaned_data["name"], quota=form.cleaned_data["quota"]
    )
    return f"Created the invitation link {link.name!r}.", []


@campaign_action
def link_close_view(request, campaign, link_id: int):
    link = InvitationLink.objects.filter(pk=link_id, campaign=campaign).first()
    if link is None:
        raise NotFound(f"No invitation link {link_id} in this campaign.")
    invitation_link_close(link=link)
    return f"Closed the invitation link {link.name!r}.", []


@campaign_action
def personal_link_create_view(request, campaign):
    form = _valid(
        PersonalLinkForm(request.POST, auto_id="personal_%s"),
        request=request,
        keep_as="personal_link_form",
    )
    link = personal_link_create(
        campaign=campaign,
        worker_name=form.cleaned_data["worker"],
        days=form.cleaned_data["days"],
        created_by=request.user,
    )
    return (
        f"Created a personal link for {link.worker.external_id}, valid until "
        f"{link.expires_at:%Y-%m-%d %H:%M} UTC. Send it to them only: it opens their work.",
        [],
    )


@campaign_action
def personal_link_revoke_view(request, campaign, link_id: int):
    link = PersonalLink.objects.select_related("worker").filter(pk=link_id, campaign=campaign)
    link = link.first()
    if link is None:
        raise NotFound(f"No personal link {link_id} in this campaign.")
    personal_link_revoke(link=link)
    return (
        f"Revoked the personal link of {link.worker.external_id}: it and the task pages it "
        "opened no longer work.",
        [],
    )


@campaign_action
def sync_view(request, campaign):
    report = platform_sync(campaign=campaign)
    return f"Status synced: {report.summary()}", report.problems


@campaign_action
def approve_view(request, campaign, assignment_id: int):
    form = _valid(ApproveForm(request.POST))
    assignment = assignment_of(campaign, assignment_id)
    review.assignment_approve(assignment=assignment, feedback=form.cleaned_data["feedback"])
    return f"Approved assignment {assignment.id}.", []


@campaign_action
def reject_view(request, campaign, assignment_id: int):
    form = _valid(RejectForm(request.POST))
    assignment = assignment_of(campaign, assignment_id)
    review.assignment_reject(assignment=assignment, feedback=form.cleaned_data["feedback"])
    return f"Rejected assignment {assignment.id}.", []


@campaign_action
def bonus_view(request, campaign, assignment_id: int):
    form = _valid(BonusForm(request.POST))
    assignment = assignment_of(campaign, assignment_id)
    review.worker_bonus(
        assignment=assignment,
        amount=form.cleaned_data["amount"],
        reason=form.cleaned_data["reason"],
        unique_token=form.cleaned_data["unique_token"],
    )
    return f"Paid a bonus of {form.cleaned_data['amount']} on assignment {assignment.id}.", []


@campaign_action
def block_view(request, campaign, worker_id: int):
    form = _valid(BlockForm(request.POST))
    worker = worker_of(campaign, worker_id)
    scope = form.cleaned_data["scope"]
    review.worker_block(
        worker=worker,
        reason=form.cleaned_data["reason"],
        scope=scope,
        campaign=campaign,
        by=request.user,
    )
    where = "this campaign" if scope == BlockScope.CAMPAIGN else "all your campaigns"
    return (
        f"Blocked worker {worker.external_id} from {where}. Other researchers' campaigns "
        "are not affected, and nothing is sent to the platform (its block would cover "
        "every researcher here; ask an administrator for that).",
        [],
    )
