"""The worker's pages: instructions, rounds, training feedback, completion (htmx, server-rendered).

Workers have no account: the signed token in every URL is their credential, and a
form token in each page stands in for the CSRF cookie that a platform's iframe would
block (see `cfannotate.core.worker_tokens`). Views only translate HTTP to the services in
`cfannotate.labeling.rounds` and back. What differs by crowd platform (who may frame the
pages, how the completion page hands the work back) comes from `cfannotate.crowd.providers`.
"""

from collections.abc import Callable
from functools import wraps

from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect, push_url

from cfannotate.campaigns.task_templates import template_for
from cfannotate.core.exceptions import (
    CfannotateError,
    Expired,
    InvalidInput,
    MethodNotAllowed,
    NotFound,
)
from cfannotate.core.framing import allow_form_posts
from cfannotate.core.htmx import HtmxHttpRequest
from cfannotate.core.worker_tokens import (
    assignment_binding_check,
    form_token,
    form_token_check,
    resume_code,
)
from cfannotate.crowd.blocks import WorkerBlocked
from cfannotate.crowd.models import Platform
from cfannotate.crowd.providers import allow_platform_framing, handback_for
from cfannotate.crowd.services import ANONYMOUS_ID
from cfannotate.labeling import rounds
from cfannotate.labeling.assignments import AssignmentExpired, raise_if_expired
from cfannotate.labeling.models import Assignment, AssignmentState, RoundKind

FORM_TOKEN_FIELD = "form_token"  # noqa: S105 (a field name)
FORM_TOKEN_HEADER = "X-Worker-Form"  # noqa: S105 (a header name)
WRONG_METHOD = "This page cannot be used that way. Open it from the link you were given."
# What an htmx submit swaps into the page's <main>: the round, with its <title>.
ROUND_SWAP = "labeling/round.html#swap"
# What a worker whose assignment expired does next: a platform still holds the task they
# accepted, which only they can give back. (Prolific lets a returned study be taken again
# only where the study allows several submissions, so nothing is promised there.)
AFTER_EXPIRY = {
    Platform.MTURK: (
        "Return the HIT on MTurk so that it does not count against you. If the HIT is still "
        "listed, you can accept it again: that starts a new assignment."
    ),
    Platform.PROLIFIC: "Return the study on Prolific so that it does not count against you.",
    Platform.LINK: "To start a new assignment, open the link you were given again.",
}
# Notices a page shows after a redirect, named in its address (`?notice=`); the address
# names one, never carries its text.
NOTICES = {
    "submitted-before": (
        "This round was already submitted (in another tab or on another device); the answers "
        "given then are kept. Go on from here."
    ),
}


def _next_step(error: CfannotateError, assignment: Assignment | None) -> str:
    if isinstance(error, AssignmentExpired) and assignment is not None:
        return AFTER_EXPIRY.get(assignment.worker.platform, "")
    return ""


def _error_page(
    request: HttpRequest, error: CfannotateError, assignment: Assignment | None = None
) -> HttpResponse:
    template = "labeling/_error.html" if getattr(request, "htmx", False) else "labeling/error.html"
    context = {
        "error": error,
        "next_step": _next_step(error, assignment),
        "campaign": assignment.campaign if assignment else None,
    }
    response = TemplateResponse(request, template, context, status=error.status_code)
    # An error must show inside a platform's frame too; it offers nothing to click.
    return allow_platform_framing(
        response, platform=assignment.worker.platform if assignment else None
    )


def _ends_the_work(error: CfannotateError) -> bool:
    """An expiry or a block: the worker can do nothing more on this round."""
    return isinstance(error, (Expired, WorkerBlocked))


def _error_answer(
    request: HttpRequest,
    error: CfannotateError,
    assignment: Assignment | None,
    *,
    token: str,
    position: int | None,
) -> HttpResponse:
    """The error page; an htmx request on a round that the work has ended loads the round's
    address as a whole page instead, which shows why and what to do next (a fragment would
    land in the round's form or in one counterfactual's status)."""
    on_a_round = assignment is not None and position is not None
    if getattr(request, "htmx", False) and on_a_round and _ends_the_work(error):
        response = HttpResponseClientRedirect(_round_url(token, position))
        response.status_code = error.status_code  # htmx follows HX-Redirect whatever the status
        return allow_platform_framing(response, platform=assignment.worker.platform)
    return _error_page(request, error, assignment)


def worker_view(view: Callable) -> Callable:
    """Resolve the token to its assignment, check the form token on writes, render errors."""

    @wraps(view)
    @never_cache
    @csrf_exempt  # replaced by the form token below; see the module docstring
    def wrapped(request: HttpRequest, token: str, **kwargs) -> HttpResponse:
        assignment = None
        try:
            assignment = rounds.assignment_from_token(token)
            assignment_binding_check(token, assignment)
            if request.method == "POST":
                given = request.POST.get(FORM_TOKEN_FIELD) or request.headers.get(FORM_TOKEN_HEADER)
                form_token_check(assignment.token_nonce, given)
            response = view(request, assignment, token=token, **kwargs)
            if isinstance(response, HttpResponseNotAllowed):
                raise MethodNotAllowed(WRONG_METHOD)
        except CfannotateError as error:
            return _error_answer(
                request, error, assignment, token=token, position=kwargs.get("position")
            )
        return allow_platform_framing(response, platform=assignment.worker.platform)

    return wrapped


def _resume_code(assignment: Assignment) -> str:
    """Anonymous link workers' only way back from another device; others have their own
    (a personal link, their platform), and a revoked personal link must stay revoked."""
    worker = assignment.worker
    if worker.platform == Platform.LINK and ANONYMOUS_ID.match(worker.external_id):
        return resume_code(assignment)
    return ""


def _context(assignment: Assignment, token: str, **extra) -> dict:
    template = template_for(assignment.campaign.task_type)
    return {
        # The page warns before the lease runs out (worker_base.html, worker.js).
        "lease_seconds": rounds.lease_seconds_left(assignment),
        "resume_code": _resume_code(assignment),
        "assignment": assignment,
        "campaign": assignment.campaign,
        "token": token,
        "form_token": form_token(assignment.token_nonce),
        "instructions": assignment.campaign.instructions
        or (template.instructions if template else ""),
        **extra,
    }


def _notice(request: HttpRequest) -> str:
    return NOTICES.get(request.GET.get("notice", ""), "")


def _round_url(token: str, position: int) -> str:
    return reverse("worker-round", kwargs={"token": token, "position": position})


def _next_url(assignment: Assignment, token: str) -> str:
    if assignment.state == AssignmentState.SUBMITTED:
        return reverse("worker-done", kwargs={"token": token})
    current = rounds.current_round(assignment)
    if current is None:
        return reverse("worker-done", kwargs={"token": token})
    return _round_url(token, current.position)


@worker_view
@require_GET
def assignment_start_page(request: HttpRequest, assignment: Assignment, *, token: str):
    """Instructions before the first round; later visits go straight back to work."""
    if assignment.state == AssignmentState.SUBMITTED:
        return redirect("worker-done", token=token)
    raise_if_expired(assignment)
    started = assignment.rounds.filter(served_at__isnull=False).exists()
    if started:
        return redirect(_next_url(assignment, token))
    return _instructions_page(request, assignment, token, first_visit=True)


def _instructions_page(request, assignment: Assignment, token: str, *, first_visit: bool):
    context = _context(
        assignment, token, next_url=_next_url(assignment, token), first_visit=first_visit
    )
    return TemplateResponse(request, "labeling/instructions.html", context)


@worker_view
@require_GET
def instructions(request: HttpRequest, assignment: Assignment, *, token: str):
    return _instructions_page(request, assignment, token, first_visit=False)


@worker_view
@require_GET
def round_page(request: HttpRequest, assignment: Assignment, *, token: str, position: int):
    """The current round; a submitted training round shows its feedback; anything else
    leads back to where the worker is."""
    try:
        view = rounds.round_serve(assignment=assignment, position=position)
    except rounds.RoundNotCurrent as moved:
        round_ = moved.round
        if round_.kind == RoundKind.TRAINING and round_.submitted_at:
            return _feedback_page(request, assignment, token, round_)
        return redirect(_next_url(assignment, token))
    except NotFound:
        return redirect(_next_url(assignment, token))
    context = _context(assignment, token, view=view, notice=_notice(request))
    return TemplateResponse(request, "labeling/round.html", context)


def _feedback_page(request, assignment: Assignment, token: str, round_):
    feedback = rounds.training_feedback(assignment, round_)
    return TemplateResponse(
        request,
        "labeling/feedback.html",
        _context(
            assignment,
            token,
            round=round_,
            # The sentence the edits are of, as the round showed it (premise included).
            reference=round_.gold_round.original,
            feedback=feedback,
            correct=sum(item.correct for item in feedback),
            next_url=_next_url(assignment, token),
            notice=_notice(request),
        ),
    )


def _answers_from(post, indices) -> list[rounds.Answer]:
    answers = []
    for index in indices:
        valid_field, label_field = f"valid-{index}", f"label-{index}"
        if valid_field not in post and label_field not in post:
            continue
        answers.append(
            rounds.Answer(
                index=index,
                is_valid=rounds.parse_valid(post.get(valid_field), field=valid_field),
                label=post.get(label_field) or None,
            )
        )
    return answers


@worker_view
@require_POST
def item_save(
    request: HtmxHttpRequest, assignment: Assignment, *, token: str, position: int, index: int
):
    """Save one counterfactual's answers as soon as the worker clicks (htmx)."""
    try:
        answers = _answers_from(request.POST, [index])
        if not answers:
            raise InvalidInput("Nothing to save: choose Valid or Invalid, or a label.")
        saved = rounds.judgment_save(assignment=assignment, position=position, answers=answers)
    except CfannotateError as error:
        if not request.htmx or _ends_the_work(error):
            raise
        # In the counterfactual's status, which keeps its id: the next click has a target.
        context = {"index": index, "error": error}
        return TemplateResponse(
            request, "labeling/round.html#save-error", context, status=error.status_code
        )
    if not request.htmx:
        return redirect(_round_url(token, position))
    item = saved.items[index - 1]
    return TemplateResponse(
        request, "labeling/round.html#save-status", {"item": item, "complete": saved.complete}
    )


@worker_view
@require_POST
def lease_keep(request: HtmxHttpRequest, assignment: Assignment, *, token: str):
    """The worker's "I'm still here": they renew their lease before it runs out (htmx; without
    JavaScript there is no warning, and any answer renews it anyway)."""
    rounds.assignment_keep(assignment=assignment)
    if not request.htmx:
        return redirect(_next_url(assignment, token))
    return HttpResponse(status=204)


@worker_view
@require_POST
def round_submit(request: HtmxHttpRequest, assignment: Assignment, *, token: str, position: int):
    """Submit a round with its final answers; a double submit or replay lands in the same place."""
    # Parsed before the try: a malformed field is an error page, not a round shown again
    # (the round may not exist).
    answers = _answers_from(request.POST, range(1, 1 + rounds.MAX_ITEMS_PER_ROUND))
    try:
        outcome = rounds.round_submit(
            assignment=assignment, position=position, answers=answers, serve_next=request.htmx
        )
    except InvalidInput as error:
        if not error.fields or "item" in error.fields:
            raise
        # Show the round again with what was saved and what is missing.
        view = rounds.round_view(assignment, assignment.rounds.get(position=position))
        context = _context(assignment, token, view=view, error=error)
        template = ROUND_SWAP if request.htmx else "labeling/round.html"
        return TemplateResponse(request, template, context, status=400)
    if outcome.next_view is not None:
        # htmx: the next round in this response, swapped in place, its address pushed.
        context = _context(assignment, token, view=outcome.next_view)
        response = TemplateResponse(request, ROUND_SWAP, context)
        return push_url(response, _round_url(token, outcome.next_position))
    if outcome.show_feedback:
        url = _round_url(token, outcome.submitted_position)
    elif outcome.next_position is None:
        url = reverse("worker-done", kwargs={"token": token})
    else:
        url = _round_url(token, outcome.next_position)
    if outcome.earlier_answers_kept:
        url += "?notice=submitted-before"
    if request.htmx:
        # Feedback and the completion page load as whole pages (the completion page
        # brings its own headers for handing the work back).
        return HttpResponseClientRedirect(url)
    return redirect(url)


@worker_view
@require_GET
def done(request: HttpRequest, assignment: Assignment, *, token: str):
    """The completion page: what the worker hands back to the platform."""
    if assignment.state != AssignmentState.SUBMITTED:
        raise_if_expired(assignment)
        return redirect(_next_url(assignment, token))
    # Everything is stored by now; the platform gets the result only from here.
    handback = handback_for(assignment)
    context = _context(assignment, token, handback=handback, notice=_notice(request))
    response = TemplateResponse(request, "labeling/done.html", context)
    if handback is not None and handback.method == "post":
        allow_form_posts(response, origins=[handback.origin])
    return response
