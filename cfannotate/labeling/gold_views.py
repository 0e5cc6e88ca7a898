"""The gold rounds page: every gold and training round with its expected answers, switching
rounds on and off, changing answers no worker has had yet, a new round made on an
original picked from a searchable list, of its candidates or of typed counterfactuals (htmx),
and rounds imported from a JSONL file.

Researcher-only and owner-scoped: expected answers never reach a worker's page.
"""

import re
from dataclasses import dataclass, field

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.template.defaultfilters import pluralize
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from cfannotate.campaigns.access import campaign_owner_required
from cfannotate.candidates.selectors import CandidateFilters, candidates_filtered
from cfannotate.core import tabular
from cfannotate.core.exceptions import CfannotateError, InvalidInput
from cfannotate.core.form_numbers import is_digits
from cfannotate.core.htmx import HtmxHttpRequest
from cfannotate.core.pagination import page_of
from cfannotate.core.text import counted, sentence
from cfannotate.core.upload_handlers import one_upload
from cfannotate.labeling import gold
from cfannotate.labeling.models import GoldKind, UnitItem
from cfannotate.labeling.promotion import candidates_promote_to_gold
from cfannotate.labeling.selectors import gold_pick_originals, gold_rounds_of, gold_size_note

PAGE = "labeling/gold.html"
PICK_PAGE = "labeling/gold_original.html"
ROUND = "labeling/_gold_round.html"
IMPORT_BLOCK = "labeling/gold.html#import"
AUTHOR_ROWS = 3  # counterfactuals per round, as real rounds show (Polyjuice §4.2)
PICK_PER_PAGE = 20  # originals per page of the gold page's list
MAX_SEARCH = 200
NO_ITEMS = "Tick at least one candidate, or type a new counterfactual."
ITEM_FIELD = re.compile(r"items\[(?P<number>\d+)\]\.(?P<field>\w+)")  # as gold.py names them
BOTH_KINDS_OF_ITEMS = (
    "Either tick candidates or type new counterfactuals: a round is made of one or the other."
)


@campaign_owner_required
@require_GET
def gold_page(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """The rounds, and the originals a new round can use: searched by id or text, a page at a
    time; htmx asks for just the list while the researcher types."""
    campaign = request.campaign
    if request.htmx and request.htmx.target == "gold-picker":
        return TemplateResponse(request, PAGE + "#picker", _picker_context(request, campaign))
    return TemplateResponse(request, PAGE, _page_context(request, campaign))


def _picker_context(request, campaign) -> dict:
    search = request.GET.get("q", "").strip()[:MAX_SEARCH]
    originals = gold_pick_originals(campaign, search=search)
    query = request.GET.copy()
    query.pop("page", None)
    return {
        "campaign": campaign,
        "search": search,
        "query": query.urlencode(),
        "page": page_of(originals, PICK_PER_PAGE, request.GET.get("page")),
    }


def _page_context(request, campaign) -> dict:
    return _picker_context(request, campaign) | {
        "rounds": gold_rounds_of(campaign),
        "size_note": gold_size_note(campaign),
        # one query whether or not a round shows its answers' labels (the import note does)
        "labels": list(campaign.labels.all()),
        "failed": None,  # a round whose change was refused (`RefusedAnswers`)
    }


@campaign_owner_required
@require_POST
def gold_import(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    """Rounds from an uploaded JSONL file, all or none (`gold.gold_rounds_upload`): the gold
    page again with what was made, or the upload form with why nothing was."""
    campaign = request.campaign
    try:
        upload = one_upload(request.FILES)
        if upload is None:
            raise InvalidInput(
                "Choose a JSONL file of rounds to upload.", fields={"file": ["No file."]}
            )
        made = gold.gold_rounds_upload(
            campaign=campaign,
            file_name=upload.name,
            content=tabular.upload_bytes(upload, max_bytes=gold.MAX_UPLOAD_BYTES),
        )
    except CfannotateError as error:
        # htmx swaps the upload block; a plain form post gets the whole page, the error in it.
        if request.htmx:
            template, context = (
                IMPORT_BLOCK,
                {"campaign": campaign, "labels": campaign.labels.all()},
            )
        else:
            template, context = PAGE, _page_context(request, campaign)
        context["import_error"] = error
        return TemplateResponse(request, template, context, status=error.status_code)
    messages.success(request, f"Imported {counted(made, 'round')} from {upload.name}.")
    target = reverse("gold-page", args=[campaign.id])
    return HttpResponseClientRedirect(target) if request.htmx else redirect(target)


def _typed_items(post) -> list[dict]:
    """The new counterfactuals typed on the pick form (empty rows left out)."""
    return [
        {
            "text": post.get(f"new-text-{number}", ""),
            "valid": post.get(f"new-valid-{number}", ""),
            "label": post.get(f"new-label-{number}", ""),
            "explanation": post.get(f"new-explanation-{number}", ""),
        }
        for number in range(1, AUTHOR_ROWS + 1)
        if post.get(f"new-text-{number}", "").strip()
    ]


def _pick_context(campaign, original, post, error=None) -> dict:
    typed = [
        {
            "number": number,
            "text": post.get(f"new-text-{number}", ""),
            "valid": post.get(f"new-valid-{number}", ""),
            "label": post.get(f"new-label-{number}", ""),
            "explanation": post.get(f"new-explanation-{number}", ""),
        }
        for number in range(1, AUTHOR_ROWS + 1)
    ]
    return {
        "campaign": campaign,
        "original": original,
        "in_units": original.units.exists(),
        "rows": _candidate_rows(campaign, original, post),
        "typed_rows": typed,
        "labels": campaign.labels.all(),
        "kinds": GoldKind.choices,
        "kind": post.get("kind", GoldKind.GOLD),
        "training_most": gold.MAX_ITEMS,
        "error": error,
    }


@campaign_owner_required
@require_http_methods(["GET", "POST"])
def gold_original(request: HtmxHttpRequest, campaign_id: int, original_id: int) -> HttpResponse:
    """A round on one original: its candidates ticked, or new counterfactuals typed, each with
    the answers a careful worker gives; saved as gold or training by the API's services."""
    campaign = request.campaign
    original = campaign.originals.select_related("label").filter(pk=original_id).first()
    if original is None:
        raise Http404("No such original in this campaign.")
    error = None
    if request.method == "POST":
        in_units = UnitItem.objects.filter(unit__original=original).count()
        post = request.POST
        kind = post.get("kind", GoldKind.GOLD)
        picked, typed = _promoted_items(post), _typed_items(post)
        try:
            if picked and typed:
                raise InvalidInput(BOTH_KINDS_OF_ITEMS, fields={"items": ["Both given."]})
            if not picked and not typed:
                raise InvalidInput(NO_ITEMS, fields={"items": ["None given."]})
            if picked:
                made = candidates_promote_to_gold(
                    campaign=campaign, original=original, kind=kind, items=picked
                )
            else:
                made = gold.gold_round_author(
                    campaign=campaign, original=original, kind=kind, items=typed
                )
        except CfannotateError as caught:
            error = caught
        else:
            return _round_made(request, campaign, original, made, left_units=in_units)
    context = _pick_context(campaign, original, request.POST, error)
    status = 200 if error is None else error.status_code
    template = PICK_PAGE + ("#pick-form" if request.htmx else "")
    return TemplateResponse(request, template, context, status=status)


def _round_made(request, campaign, original, gold_round, *, left_units: int) -> HttpResponse:
    # Named by its kind (workers see training rounds, never gold), and by the original's id
    # alone: its text may end with a period of its own.
    kind = "training" if gold_round.kind == GoldKind.TRAINING else "gold"
    made = f"A {kind} round was made from original {original.external_id}"
    if left_units:
        made += (
            f"; the original left its labeling units, and its {left_units} "
            f"candidate{pluralize(left_units)} there {pluralize(left_units, 'is,are')} back "
            "on the review page, unlabeled"
        )
    messages.success(request, sentence(made))
    target = reverse("gold-page", args=[campaign.id])
    return HttpResponseClientRedirect(target) if request.htmx else redirect(target)


@dataclass(frozen=True)
class RefusedAnswers:
    """A round's change that was refused: its error, with the answers' problems named by
    the row the researcher sees ("Counterfactual 3, label"), and what was typed, shown
    back in the round's form so nothing is lost."""

    round_id: int
    error: CfannotateError
    typed: dict = field(default_factory=dict)  # item id -> {"valid", "label", "explanation"}
    problems: dict = field(default_factory=dict)  # item id -> {field: [problems]}


def _answers_refused(
    gold_round_id: int, items: list[dict], error: CfannotateError
) -> RefusedAnswers:
    """`gold_round_update`'s error on the `items` posted, its `items[3].label` in words."""
    item_ids = {number: item["id"] for number, item in enumerate(items, start=1)}
    fields, problems = {}, {}
    for where, notes in error.fields.items():
        match = ITEM_FIELD.fullmatch(where)
        item_id = item_ids.get(int(match["number"])) if match else None
        if item_id is None:
            fields.setdefault(where, []).extend(notes)
            continue
        name = match["field"]
        problems.setdefault(item_id, {}).setdefault(name, []).extend(notes)
        fields.setdefault(f"Counterfactual {match['number']}, {name}", []).extend(notes)
    typed = {
        item["id"]: {name: item[name] for name in ("valid", "label", "explanation")}
        for item in items
    }
    return RefusedAnswers(
        round_id=gold_round_id,
        error=type(error)(error.message, fields=fields),
        typed=typed,
        problems=problems,
    )


def _round_fragment(request, campaign, gold_round_id: int, *, failed=None, message=""):
    """The round's panel again (htmx). A plain form post that was done goes back to the
    gold page, with what happened as a message above the rounds; one that was refused gets
    the gold page with the round's error and what was typed in its form."""
    gold_round = gold_rounds_of(campaign).filter(pk=gold_round_id).first()
    if gold_round is None:
        raise Http404("No such gold round in this campaign.")
    status = 200 if failed is None else failed.error.status_code
    if not request.htmx:
        if failed is not None:
            context = _page_context(request, campaign) | {"failed": failed}
            return TemplateResponse(request, PAGE, context, status=status)
        messages.success(request, sentence(f"Round #{gold_round.pk}: {message or 'saved'}"))
        target = reverse("gold-page", args=[campaign.id])
        return redirect(f"{target}#gold-round-{gold_round.pk}")
    context = {
        "campaign": campaign,
        "gold_round": gold_round,
        "labels": campaign.labels.all(),
        "failed": failed,
        "message": message,
        "state_out_of_band": request.htmx,  # the state in the table of rounds follows
        "size_note": gold_size_note(campaign),  # and so does the note on gold rounds that stand out
    }
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
        failed = RefusedAnswers(round_id=gold_round.pk, error=error)
        return _round_fragment(request, campaign, gold_round.pk, failed=failed)
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
        failed = _answers_refused(gold_round.pk, items, error)
        return _round_fragment(request, campaign, gold_round.pk, failed=failed)
    return _round_fragment(request, campaign, gold_round.pk, message="Answers saved.")


def _candidate_rows(campaign, original, post) -> list[dict]:
    """One original's candidates as rows to tick, with the answers posted.

    Nothing is chosen for the researcher: a gold answer scores every worker who meets it,
    and a guess left unchecked (the label the generator aimed for, "valid" for a broken
    sentence) would fail the careful ones. What the generator aimed for and what the
    classifier predicts are shown beside the choice instead.
    """
    ticked = set(post.getlist("candidate"))
    return [
        {
            "candidate": candidate,
            "ticked": str(candidate.pk) in ticked,
            "valid": post.get(f"valid-{candidate.pk}", ""),
            "label": post.get(f"label-{candidate.pk}", ""),
            "explanation": post.get(f"explanation-{candidate.pk}", ""),
        }
        for candidate in candidates_filtered(campaign, CandidateFilters(original=original.pk))
    ]


def _promoted_items(post) -> list[dict]:
    """The ticked candidates of the promote form, with the answers typed beside each."""
    items = []
    for raw in post.getlist("candidate"):
        items.append(
            {
                "candidate_id": int(raw) if is_digits(raw) else raw,
                "valid": post.get(f"valid-{raw}", ""),
                "label": post.get(f"label-{raw}", ""),
                "explanation": post.get(f"explanation-{raw}", ""),
            }
        )
    return items
