"""Writes of candidates: generating them for a campaign's originals and storing the result."""

import logging
from dataclasses import dataclass

from django.db import transaction

from cfannotate.campaigns.models import Campaign, CampaignStatus, Original
from cfannotate.candidates import adapter
from cfannotate.candidates.models import Candidate
from cfannotate.core.exceptions import InvalidInput

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GenerationSummary:
    originals: int
    prompts: int
    stored: int  # new Candidate rows
    kept: int  # of those, passed the fluency filter
    already_known: int  # generated again but already stored for that original
    malformed: int
    seconds: dict[str, float]


def candidates_store(*, campaign: Campaign, originals: dict[str, Original], results) -> int:
    """Insert annotated results, skipping texts the original already has. Returns rows added."""
    rows = [adapter.candidate_row(campaign, originals, result) for result in results]
    with transaction.atomic():
        before = Candidate.objects.filter(campaign=campaign).count()
        # The unique (original, md5(text)) constraint makes re-runs idempotent.
        Candidate.objects.bulk_create(rows, batch_size=500, ignore_conflicts=True)
        return Candidate.objects.filter(campaign=campaign).count() - before


def targets_for_campaign(campaign: Campaign, records: list) -> list:
    """Plain targets, or with `targeting = {"slices": [...], "code": ...}` only the originals
    that match a slice, blanked exactly on the pattern (Polyjuice §4.1)."""
    from generation.parsing import ParseCache
    from generation.polyjuice import PerturbTarget
    from generation.slicing import targets_for_slices

    targeting = campaign.targeting or {}
    slices = targeting.get("slices") or []
    if not slices:
        return [PerturbTarget(original=record) for record in records]
    try:
        return targets_for_slices(records, ParseCache(), slices, code=targeting.get("code"))
    except ValueError as error:
        raise InvalidInput(
            f"Invalid targeting: {error}", fields={"targeting": [str(error)]}
        ) from None


def originals_tag_slices(*, campaign: Campaign) -> int:
    """Store on each original the names of the slicing functions it matches."""
    from generation.parsing import ParseCache
    from generation.slicing import tag_slices

    originals = list(campaign.originals.order_by("id"))
    docs = ParseCache().parse_many([original.text for original in originals])
    for original, tags in zip(originals, tag_slices(docs), strict=True):
        original.slice_tags = tags
    Original.objects.bulk_update(originals, ["slice_tags"], batch_size=500)
    return len(originals)


def candidates_generate(
    *,
    campaign: Campaign,
    originals: list[Original] | None = None,
    device: str = "auto",
    show_progress: bool = False,
    lm=None,
    fluency_lm=None,
) -> GenerationSummary:
    """Run the Polyjuice pipeline on `originals` (default: all of the campaign's) and store it.

    Runs in the calling process: the web app queues it as a background task; the
    demo calls it directly, and each chunk of a generation run (`cfannotate.candidates.runs`).
    """
    from generation.pipeline import run_polyjuice

    settings = adapter.pipeline_settings(campaign, device=device)
    originals = list(
        originals
        if originals is not None
        else campaign.originals.select_related("label").order_by("id")
    )
    if not originals:
        raise InvalidInput("The campaign has no originals to perturb.")
    by_key = {str(original.pk): original for original in originals}
    targets = targets_for_campaign(campaign, adapter.original_records(originals))
    if not targets:
        raise InvalidInput("No original matches the campaign's slices; nothing to generate.")
    result = run_polyjuice(
        targets, settings, lm=lm, fluency_lm=fluency_lm, show_progress=show_progress
    )
    stored = candidates_store(campaign=campaign, originals=by_key, results=result.candidates)
    if campaign.status == CampaignStatus.DRAFT:
        Campaign.objects.filter(pk=campaign.pk).update(status=CampaignStatus.REVIEW)
    kept = len(result.kept)
    logger.info(
        "campaign %s: %d candidates stored (%d kept) from %d originals",
        campaign.pk,
        stored,
        kept,
        len(originals),
    )
    return GenerationSummary(
        originals=len(originals),
        prompts=result.prompts,
        stored=stored,
        kept=kept,
        already_known=len(result.candidates) - stored,
        malformed=result.malformed,
        seconds=result.seconds,
    )
