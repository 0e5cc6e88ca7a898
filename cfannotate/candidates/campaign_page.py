"""The candidates' part of the campaign's generation page (progress and the candidates
table), of its settings page (the built-in classifier's last check) and of its overview
(runs and candidates counted), registered with `campaigns.page_parts` and
`campaigns.stages` in `CandidatesConfig.ready()`."""

from django.db.models import Count, Exists, OuterRef
from django.http import HttpRequest

from cfannotate.campaigns.models import Campaign
from cfannotate.candidates.imports import latest_candidate_import
from cfannotate.candidates.models import (
    ACTIVE_IMPORT_STATES,
    CandidateImport,
    CandidateStatus,
    GenerationRun,
    RunState,
)
from cfannotate.candidates.predictions import baseline_check_note
from cfannotate.candidates.selectors import (
    candidate_counts,
    generation_overview,
    latest_run,
    recent_candidates,
    run_progress,
)


def campaign_page_context(request: HttpRequest, campaign: Campaign) -> dict:
    run = latest_run(campaign)
    return {
        "candidates": recent_candidates(campaign),
        "progress": run_progress(run) if run else None,
        "generation": generation_overview(campaign),
        "counts": candidate_counts(campaign),  # the candidates table's link
        "candidate_import": latest_candidate_import(campaign),  # its progress or its end
    }


def settings_page_context(request: HttpRequest, campaign: Campaign) -> dict:
    """The settings page's Selection block: how the built-in classifier did on its last
    check, beside the flip weight it decides the use of."""
    return {"classifier_check": baseline_check_note(campaign)}


def candidates_facts(campaign: Campaign) -> dict:
    """Facts for the overview's stages (`campaigns.stages.StageFacts`)."""
    # Whether a run or an import is under way, in one query.
    active, importing = (
        Campaign.objects.filter(pk=campaign.pk)
        .annotate(
            running=Exists(
                GenerationRun.objects.filter(
                    campaign=OuterRef("pk"), state__in=(RunState.QUEUED, RunState.RUNNING)
                )
            ),
            importing=Exists(
                CandidateImport.objects.filter(
                    campaign=OuterRef("pk"), state__in=ACTIVE_IMPORT_STATES
                )
            ),
        )
        .values_list("running", "importing")
        .get()
    )
    # Gold and training rounds' counterfactuals are answers, not candidates to label.
    made = campaign.candidates.exclude(status=CandidateStatus.GOLD).aggregate(
        candidates=Count("id"), originals=Count("original_id", distinct=True)
    )
    return {
        "generation_active": active,
        "import_active": importing,
        "candidates": made["candidates"],
        "originals_with_candidates": made["originals"],
    }
