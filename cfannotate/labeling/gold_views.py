"""The gold rounds page: every gold and training round with its expected answers, switching
rounds on and off, changing answers no worker has had yet, authoring a new round (htmx).

Researcher-only and owner-scoped: expected answers never reach a worker's page.
"""

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from cfannotate.campaigns.access import campaign_owner_required
from cfannotate.candidates.selectors import CandidateFilters, candidates_filtered
from cfannotate.core.exceptions import CfannotateError, InvalidInput
from cfannotate.core.htmx import HtmxHttpRequest
from cfannotate.core.text import sentence
from cfannotate.labeling import gold
from cfannotate.labeling.models import GoldKind, LabelingUnit
from cfannotate.labeling.promotion import candidates_promote_to_gold
from cfannotate.labeling.selectors import gold_rounds_of

PAGE = "labeling/gold.html"
PROMOTE_PAGE = "candidates/promote.html"
ROUND = "labeling/_gold_round.html"
AUTHOR_ROWS = 3  # counterfactuals per round, as real rounds show (Polyjuice §4.2)
ORIGINAL_CHOICES = 500  # originals offered in the author form's list



def _author_context(campaign, posted=None, error=None) -> dict:
    in_units = LabelingUnit.objects.filter(campaign=campaign).values("original_id")
    free = campaign.originals.exclude(pk__in=in_units).order_by("id")[:ORIGINAL_CHOICES]
    rows = [
        {
            "number": number,
            "text": posted.get(f"text-{number}", "") if posted else "",
            "valid": posted.get(f"valid-{number}", "true") if posted else "true",
            "label": posted.get(f"label-{number}", "") if posted else "",
            "explanation": posted.get(f"explanation-{number}", "") if posted else "",
        }
        for number in range(1, AUTHOR_ROWS + 1)
    ]
    return {
        "campaign": campaign,
        "free_originals": free,
        "labels": campaign.labels.all(),
        "kinds": GoldKind.choices,
        "author_rows": rows,
        "author_original": posted.get("original", "") if posted else "",
        "author_kind": posted.get("kind", GoldKind.GOLD) if posted else GoldKind.GOLD,
        "author_error": error,
    }


@campaign_owner_required
@require_GET
def gold_page(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    campaign = request.campaign
    context = {**_author_context(campaign), "rounds": gold_rounds_of(campaign)}
    return TemplateResponse(request, PAGE, context)


@campaign_owner_required
@require_POST
def gold_author(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """A round of typed counterfactuals: the filled rows of the form; errors in place."""
    campaign = request.campaign
    post = request.POST
    external_id = post.get("original", "").strip()
    original = campaign.originals.filter(external_id=external_id).first()
    items = [
        {
            "text": post.get(f"text-{number}", ""),
            "valid": post.get(f"valid-{number}", "true"),
            "label": post.get(f"label-{number}", ""),
            "explanation": post.get(f"explanation-{number}", ""),
        }
        for number in range(1, AUTHOR_ROWS + 1)
        if post.get(f"text-{number}", "").strip()
    ]
    try:
        if original is None:
            raise InvalidInput(
                f"No original {external_id!r} in this campaign."
                if external_id
                else "Choose an original.",
                fields={"original": ["Give the id of one of the campaign's originals."]},
            )
        authored = gold.gold_round_author(
            campaign=campaign, original=original, kind=post.get("kind", ""), items=items
        )
    except CfannotateError as error:
        context = {**_author_context(campaign, post, error), "rounds": gold_rounds_of(campaign)}
        template = PAGE + ("#author" if request.htmx else "")
        return TemplateResponse(request, template, context, status=error.status_code)
    # Named by its kind (workers see training rounds, never gold), and by the original's id
    # alone: its text may end with a period of its own.
    kind = "training" if authored.kind == GoldKind.TRAINING else "gold"
    messages.success(
        request, sentence(f"A {kind} round was authored on original {original.external_id}")
    )
    target = reverse("gold-page", args=[campaign.id])
    return HttpResponseClientRedirect(target) if request.htmx else redirect(target)


def _round_fragment(request, campaign, gold_round_id: int, *, error=None, message=""):
    gold_round = gold_rounds_of(campaign).filter(pk=gold_round_id).first()
    if gold_round is None:
        raise Http404("No such gold round in this campaign.")
    context = {
        "campaign": campaign,
        "gold_round": gold_round,
        "labels": campaign.labels.all(),
        "error": error,
        "message": message,
    }
    status = 200 if error is None else error.status_code
    return TemplateResponse(request, ROUND, context, status=status)


def _gold_round(campaign, gold_round_id: int):
    gold_round = campaign.gold_rounds.filter(pk=gold_round_id).first()
    if gold_round is None:
        raise Http404("No such gold round in this campaign.")
    return gold_round


@campaign_owner_required
@require_POST
def gold_round_active(request: HtmxHttpRequest, campaign_id: int, gold_round_id: int):
    """Switch a round on (`active=1`) or off (`active=0`) for new assignments."""
    campaign = request.campaign
    gold_round = _gold_round(campaign, gold_round_id)
    try:
        if request.POST.get("active") == "1":
            gold.gold_round_activate(gold_round=gold_round)
        else:
            gold.gold_round_deactivate(gold_round=gold_round)
    except CfannotateError as error:
        return _round_fragment(request, campaign, gold_round.pk, error=error)
    return _round_fragment(request, campaign, gold_round.pk)


@campaign_owner_required
@require_POST
def gold_round_answers(request: HtmxHttpRequest, campaign_id: int, gold_round_id: int):
    """Save the expected answers typed beside each item (refused once a worker had it)."""
    campaign = request.campaign
    gold_round = _gold_round(campaign, gold_round_id)
    items = [
        {
            "id": item.id,
            "valid": request.POST.get(f"valid-{item.id}", ""),
            "label": request.POST.get(f"label-{item.id}", ""),
            "explanation": request.POST.get(f"explanation-{item.id}", ""),
        }
        for item in gold_round.items.all()
    ]
    try:
        gold.gold_round_update(gold_round=gold_round, items=items)
    except CfannotateError as error:
        return _round_fragment(request, campaign, gold_round.pk, error=error)
    return _round_fragment(request, campaign, gold_round.pk, message="Answers saved.")


def _promoted_items(post) -> list[dict]:
    """The ticked candidates of the promote form, with the answers typed beside each."""
    items = []
    for raw in post.getlist("candidate"):
        items.append(
            {
                "candidate_id": int(raw) if raw.isdigit() else raw,
                "valid": post.get(f"valid-{raw}", ""),
                "label": post.get(f"label-{raw}", ""),
                "explanation": post.get(f"explanation-{raw}", ""),
            }
        )
    return items


@campaign_owner_required
@require_http_methods(["GET", "POST"])
def candidates_promote(request: HtmxHttpRequest, campaign_id: int, original_id: int):
    """Make a gold (or training) round of some of one original's candidates."""
    campaign = request.campaign
    original = campaign.originals.select_related("label").filter(pk=original_id).first()
    if original is None:
        raise Http404("No such original in this campaign.")
    error = None
    if request.method == "POST":
        kind = request.POST.get("kind", GoldKind.GOLD)
        try:
            candidates_promote_to_gold(
                campaign=campaign,
                original=original,
                kind=kind,
                items=_promoted_items(request.POST),
            )
        except CfannotateError as caught:
            error = caught
        else:
            made = "training" if kind == GoldKind.TRAINING else "gold"
            messages.success(
                request, f"A {made} round was made from original {original.external_id}."
            )
            target = reverse("gold-page", args=[campaign.id])
            return HttpResponseClientRedirect(target) if request.htmx else redirect(target)
    post = request.POST
    ticked = set(post.getlist("candidate"))
    rows = [
        {
            "candidate": candidate,
            "ticked": str(candidate.pk) in ticked,
            "valid": post.get(f"valid-{candidate.pk}", "true"),
            # What the generator aimed for is the likeliest answer; else the original's label.
            "label": post.get(f"label-{candidate.pk}")
            or (candidate.intended_label or original.label).value,
            "explanation": post.get(f"explanation-{candidate.pk}", ""),
        }
        for candidate in candidates_filtered(campaign, CandidateFilters(original=original.pk))
    ]
    context = {
        "campaign": campaign,
        "original": original,
        "rows": rows,
        "labels": campaign.labels.all(),
        "kinds": GoldKind.choices,
        "kind": post.get("kind", GoldKind.GOLD),
        "error": error,
    }
    status = 200 if error is None else error.status_code
    template = PROMOTE_PAGE + ("#promote-form" if request.htmx else "")
    return TemplateResponse(request, template, context, status=status)
